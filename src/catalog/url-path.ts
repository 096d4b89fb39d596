/**
 * The urlPath rule of a connection configuration key: a self-managed server's context path (`/jira`), put
 * in a URL after its host. Its `/` separators are kept as they are when the template is filled, so the value
 * is held to a strict shape first: segments of unreserved characters only, no empty, `.` or `..` segment,
 * nothing percent-encoded, nothing that could end the path (`?`, `#`) or reach the host (`@`, `\`).
 */
export const MAX_URL_PATH = 255;
const URL_PATH = /^(?:\/[A-Za-z0-9._~-]+)*$/;

/** Why a value is not a URL path (undefined when it is; the empty string is: no context path). Never quotes the value. */
export function urlPathProblem(value: string): string | undefined {
  if (value.length > MAX_URL_PATH) return `is longer than ${MAX_URL_PATH} characters`;
  if (!URL_PATH.test(value))
    return 'must be a URL path such as /jira: segments of letters, digits, ".", "_", "~" or "-", each after one "/", no "/" at the end (or empty)';
  if (value.split('/').some((segment) => segment === '.' || segment === '..')) return 'may not have a "." or ".." segment';
  return undefined;
}
