"""Verifies an OAuth 1.0a HMAC-SHA1 signed request with Debian's python3-oauthlib (an independent
implementation). Reads JSON {method, uri, headers, body, consumer_secret, token_secret} on stdin and
prints "valid" or "invalid". Run with /usr/bin/python3 (the Debian interpreter that has oauthlib)."""
import json
import sys
from urllib.parse import urlparse

from oauthlib.common import Request
from oauthlib.oauth1.rfc5849 import signature

data = json.load(sys.stdin)
headers = data["headers"]
form = headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded")
body = data.get("body") or ""
request = Request(data["uri"], http_method=data["method"], body=body if form else None, headers=headers)
request.params = signature.collect_parameters(
    uri_query=urlparse(data["uri"]).query, body=body if form else "", headers=headers, exclude_oauth_signature=True
)
all_params = dict(signature.collect_parameters(headers=headers, exclude_oauth_signature=False))
request.signature = all_params["oauth_signature"]
ok = all_params.get("oauth_signature_method") == "HMAC-SHA1" and signature.verify_hmac_sha1(
    request, data["consumer_secret"], data["token_secret"]
)
print("valid" if ok else "invalid")
