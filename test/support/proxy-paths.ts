/** Proxied paths for the path checks' tests (unit and through the server). */

/** Dot segments as Tomcat, Jetty and Spring read them: ";" path parameters dropped, then "." and "..". */
export const semicolonDotSegments = [
  '/..;/admin',
  '/..;foo/admin',
  '/a/..;/..;/admin',
  '/.;/admin',
  '/.;x',
  '/%2e%2e;/admin',
  '/%2E%2E%3B/admin',
  '/..%3b/admin',
  '/..%3B/admin',
  '/.%3B/admin',
  '/%2e;/admin',
  '/%2E;jsessionid=1/admin',
  '/.%2E;/admin',
  '/%252e%252e%253b/admin',
  '/..%253b/admin',
  '/..;%2f..;%2fadmin',
  '/..;x%2f/admin',
  '/a/..;',
];

/** Paths with ";" outside any dot segment (matrix parameters and the like): proxied unchanged. */
export const semicolonPathsKept = [
  '/items;version=2',
  '/a;b=1;c=2/x',
  '/map;lat=50;long=20/tiles',
  '/..a;x',
  '/a..;/b',
  '/.well-known;v=1',
  '/...;x',
  '/v1/x;.',
];
