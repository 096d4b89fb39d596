#!/usr/bin/env python3
"""One-off migration (run once, result committed): turns every Provider manifest's
`connectionConfiguration` list of key names into the list of rules (name, pattern | enum |
hostSuffixes | anyHost, required) that src/catalog/connection-config.ts enforces.

- a key that is a whole URL host gets hostSuffixes (or anyHost for self-hosted products whose
  credential is the end user's own: API_KEY, BASIC, JWT) from the table below;
- a key whose label lists the allowed values, e.g. "(com, eu, in)", becomes an enum;
- a key used in a host next to a literal domain gets a DNS-label pattern;
- a key used in a URL path gets a path-segment pattern; other keys (headers, JWT claims) keep no rule.

Usage: python3 dev/migrations/connection-configuration-rules.py config/providers/*.yaml
"""
import re
import sys

DNS_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
PATH_SEGMENT = "[A-Za-z0-9][A-Za-z0-9._~-]{0,254}"

# provider -> key -> rule, for keys that are a whole host (no literal domain keeps them on the provider).
WHOLE_HOST = {
    "salesforce": {"instanceHost": {"hostSuffixes": ["salesforce.com"]}},
    "salesforce-sandbox": {"instanceHost": {"hostSuffixes": ["salesforce.com"]}},
    "okta": {"oktaDomain": {"hostSuffixes": ["okta.com", "oktapreview.com", "okta-emea.com"]}},
    "wrike": {"host": {"hostSuffixes": ["wrike.com"]}},
    "docusign": {"baseUriHost": {"hostSuffixes": ["docusign.net"]}},
    "customer-io": {"apiHost": {"enum": ["api.customer.io", "api-eu.customer.io"]}},
    "mailgun": {"apiHost": {"enum": ["api.mailgun.net", "api.eu.mailgun.net"]}},
    # OAuth apps are registered per server: the platform team adds its own servers to the Provider.
    "gitea": {"instanceHost": {"hostSuffixes": ["gitea.com"]}},
    "mastodon": {"instanceHost": {"hostSuffixes": ["mastodon.social"]}},
    # Self-hosted products where the secret sent is the end user's own token.
    "gitlab-pat": {"host": {"anyHost": True}},
    "sentry": {"host": {"anyHost": True}},
    "langfuse": {"host": {"anyHost": True}},
    "woocommerce": {"storeHost": {"anyHost": True}},
    "ghost-admin": {"adminDomain": {"anyHost": True}},
}

URL_LINE = re.compile(r"^\s*(authorizationUrl|tokenUrl|refreshUrl|requestTokenUrl|baseUrl|aud):\s*(\S+)")
PLACEHOLDER = re.compile(r"\$\{connectionConfig\.([A-Za-z0-9_]+)\}")


def usage(text):
    host, path = set(), set()
    for line in text.splitlines():
        m = URL_LINE.match(line)
        if not m:
            continue
        url = m.group(2).strip("'\"")
        hm = re.match(r"^[a-z]+://([^/?#]*)(.*)$", url)
        if not hm:
            continue
        host.update(PLACEHOLDER.findall(hm.group(1)))
        path.update(PLACEHOLDER.findall(hm.group(2)))
    return host, path


def label_enum(text, key):
    m = re.search(rf"^    {re.escape(key)}: .*\(([^)]*)\)\s*$", text, re.M)
    if not m:
        return None
    items = [s.strip() for s in re.split(r",|\s+or\s+", m.group(1))]
    items = [re.sub(r"^(or|and)\s+", "", s) for s in items if s.strip()]
    if len(items) < 2 or not all(re.fullmatch(r"[a-z0-9.-]+", s) for s in items):
        return None
    return items


def flow(items):
    return "[" + ", ".join(items) + "]"


def migrate(file):
    text = open(file).read()
    m = re.search(r"^  connectionConfiguration:\n((?:    - [A-Za-z0-9_]+\n)+)", text, re.M)
    if not m:
        return False
    name = re.search(r"^  name: (\S+)", text, re.M).group(1)
    keys = re.findall(r"^    - ([A-Za-z0-9_]+)$", m.group(1), re.M)
    host, path = usage(text)
    out = ["  connectionConfiguration:\n"]
    for key in keys:
        out.append(f"    - name: {key}\n")
        rule = WHOLE_HOST.get(name, {}).get(key)
        enum = (rule or {}).get("enum") or (label_enum(text, key) if key in host else None)
        if rule and "hostSuffixes" in rule:
            out.append(f"      hostSuffixes: {flow(rule['hostSuffixes'])}\n")
        elif rule and rule.get("anyHost"):
            out.append("      anyHost: true\n")
        elif enum:
            out.append(f"      enum: {flow(enum)}\n")
        elif key in host:
            out.append(f"      pattern: '{DNS_LABEL}'\n")
        elif key in path:
            out.append(f"      pattern: '{PATH_SEGMENT}'\n")
        out.append("      required: true\n")
    text = text[: m.start()] + "".join(out) + text[m.end() :]
    open(file, "w").write(text)
    return True


if __name__ == "__main__":
    n = sum(1 for f in sys.argv[1:] if migrate(f))
    print(f"migrated {n} manifests")
