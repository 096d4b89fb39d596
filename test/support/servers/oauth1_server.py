"""A real OAuth 1.0a provider for tests, built on Debian's python3-oauthlib endpoints.

Run with /usr/bin/python3 (the system Python that has oauthlib):
    /usr/bin/python3 oauth1_server.py <consumer_key> <consumer_secret> [<tba_token_id> <tba_token_secret> <tba_realm>]
Prints "READY <port>" once listening on 127.0.0.1 (or $OAUTH1_SERVER_HOST: the e2e suite's node address). Endpoints:
    POST /request_token   temporary credentials (RequestTokenEndpoint)
    GET  /authorize       a page where the user approves or denies
    POST /authorize       approval (AuthorizationEndpoint) -> redirect to the callback with a verifier
    POST /access_token    token credentials (AccessTokenEndpoint)
    GET  /resource        a protected resource (ResourceEndpoint); 200 with JSON or 401
    GET/POST /services/rest/...  with the TBA arguments: NetSuite-style token-based authentication, a
                          ResourceEndpoint that accepts only HMAC-SHA256, the given token, and realm == tba_realm
"""
import html
import json
import os
import string
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from oauthlib.common import add_params_to_uri
from oauthlib.oauth1 import (AccessTokenEndpoint, AuthorizationEndpoint, RequestTokenEndpoint,
                             RequestValidator, ResourceEndpoint)

CONSUMER_KEY, CONSUMER_SECRET = sys.argv[1], sys.argv[2]
TBA = {'token': sys.argv[3], 'secret': sys.argv[4], 'realm': sys.argv[5]} if len(sys.argv) > 5 else None
request_tokens = {}  # token -> {secret, callback, verifier}
access_tokens = {}   # token -> secret
nonces = set()


class Validator(RequestValidator):
    enforce_ssl = False
    allowed_signature_methods = ['HMAC-SHA1']
    safe_characters = set(string.ascii_letters + string.digits + '_-')
    client_key_length = (10, 64)
    request_token_length = (10, 64)
    access_token_length = (10, 64)
    nonce_length = (10, 64)
    verifier_length = (10, 64)
    dummy_client = 'dummy_client_key_for_timing'
    dummy_request_token = 'dummy_request_token_for_timing'
    dummy_access_token = 'dummy_access_token_for_timing'

    def validate_client_key(self, client_key, request):
        return client_key == CONSUMER_KEY

    def get_client_secret(self, client_key, request):
        return CONSUMER_SECRET if client_key == CONSUMER_KEY else 'dummy-secret'

    def validate_timestamp_and_nonce(self, client_key, timestamp, nonce, request, request_token=None, access_token=None):
        key = (client_key, timestamp, nonce, request_token, access_token)
        if key in nonces:
            return False
        nonces.add(key)
        return True

    def validate_redirect_uri(self, client_key, redirect_uri, request):
        return redirect_uri.startswith('http://127.0.0.1:')

    def get_default_realms(self, client_key, request):
        return []

    def validate_requested_realms(self, client_key, realms, request):
        return True

    def save_request_token(self, token, request):
        request_tokens[token['oauth_token']] = {'secret': token['oauth_token_secret'], 'callback': request.redirect_uri, 'verifier': None}

    def validate_request_token(self, client_key, token, request):
        return token in request_tokens

    def verify_request_token(self, token, request):
        return token in request_tokens

    def get_request_token_secret(self, client_key, token, request):
        return request_tokens.get(token, {}).get('secret', 'dummy')

    def get_realms(self, token, request):
        return []

    def verify_realms(self, token, realms, request):
        return True

    def validate_realms(self, client_key, token, request, uri=None, realms=None):
        return True

    def save_verifier(self, token, verifier, request):
        request_tokens[token]['verifier'] = verifier['oauth_verifier']

    def get_redirect_uri(self, token, request):
        return request_tokens[token]['callback']

    def validate_verifier(self, client_key, token, verifier, request):
        return token in request_tokens and request_tokens[token]['verifier'] == verifier

    def invalidate_request_token(self, client_key, request_token, request):
        request_tokens.pop(request_token, None)

    def save_access_token(self, token, request):
        access_tokens[token['oauth_token']] = token['oauth_token_secret']

    def validate_access_token(self, client_key, token, request):
        return token in access_tokens

    def get_access_token_secret(self, client_key, token, request):
        return access_tokens.get(token, 'dummy')


class TbaValidator(Validator):
    """NetSuite TBA: the token is made in NetSuite's UI (no flow), signatures are HMAC-SHA256, and the
    Authorization header's realm must be the account ID."""
    allowed_signature_methods = ['HMAC-SHA256']

    def validate_access_token(self, client_key, token, request):
        return TBA is not None and token == TBA['token']

    def get_access_token_secret(self, client_key, token, request):
        return TBA['secret'] if TBA and token == TBA['token'] else 'dummy'

    def validate_realms(self, client_key, token, request, uri=None, realms=None):
        return TBA is not None and request.realm == TBA['realm']


validator = Validator()
tba_endpoint = ResourceEndpoint(TbaValidator())
request_token_endpoint = RequestTokenEndpoint(validator)
authorization_endpoint = AuthorizationEndpoint(validator)
access_token_endpoint = AccessTokenEndpoint(validator)
resource_endpoint = ResourceEndpoint(validator)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _uri(self):
        return 'http://%s%s' % (self.headers['Host'], self.path)

    def _body(self):
        length = int(self.headers.get('Content-Length') or 0)
        return self.rfile.read(length).decode('utf-8') if length else ''

    def _send(self, status, headers, body):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        data = (body or '').encode('utf-8')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _tba(self, method, body):
        parsed = urllib.parse.urlparse(self.path)
        headers = dict(self.headers)
        form = (self.headers.get('Content-Type') or '').startswith('application/x-www-form-urlencoded')
        valid, req = tba_endpoint.validate_protected_resource_request(self._uri(), method, body if form else None, headers, realms=[])
        if valid:
            self._send(200, {'Content-Type': 'application/json'}, json.dumps({
                'ok': True, 'client': req.client_key, 'token': req.resource_owner_key, 'realm': req.realm,
                'method': method, 'path': parsed.path, 'query': dict(urllib.parse.parse_qsl(parsed.query)),
                'signature_method': req.signature_method}))
        else:
            self._send(401, {'Content-Type': 'application/json'}, json.dumps({'ok': False}))

    def do_POST(self):
        path = urllib.parse.urlparse(self.path).path
        body = self._body()
        headers = dict(self.headers)
        if TBA and path.startswith('/services/rest/'):
            self._tba('POST', body)
        elif path == '/request_token':
            h, b, s = request_token_endpoint.create_request_token_response(self._uri(), 'POST', body, headers)
            self._send(s, h, b)
        elif path == '/access_token':
            h, b, s = access_token_endpoint.create_access_token_response(self._uri(), 'POST', body, headers)
            self._send(s, h, b)
        elif path == '/authorize':
            form = dict(urllib.parse.parse_qsl(body))
            token = form.get('oauth_token', '')
            if token not in request_tokens:
                self._send(400, {'Content-Type': 'text/plain'}, 'unknown request token')
            elif form.get('action') == 'deny':
                callback = request_tokens.pop(token)['callback']
                self._send(302, {'Location': add_params_to_uri(callback, [('denied', token)])}, '')
            else:
                h, b, s = authorization_endpoint.create_authorization_response(
                    'http://%s/authorize?oauth_token=%s' % (self.headers['Host'], urllib.parse.quote(token)), 'GET', None, {}, realms=[])
                self._send(s, h, b)
        else:
            self._send(404, {}, 'not found')

    def do_GET(self):
        parsed = urllib.parse.urlparse(self.path)
        if TBA and parsed.path.startswith('/services/rest/'):
            self._tba('GET', '')
        elif parsed.path == '/authorize':
            token = dict(urllib.parse.parse_qsl(parsed.query)).get('oauth_token', '')
            if token not in request_tokens:
                self._send(400, {'Content-Type': 'text/plain'}, 'unknown request token')
                return
            t = html.escape(token, quote=True)
            page = ('<!doctype html><title>Authorize</title><h1>Authorize the application?</h1>'
                    '<form method="post" action="/authorize"><input type="hidden" name="oauth_token" value="%s">'
                    '<button name="action" value="approve">Approve</button>'
                    '<button name="action" value="deny">Deny</button></form>') % t
            self._send(200, {'Content-Type': 'text/html'}, page)
        elif parsed.path == '/resource':
            valid, req = resource_endpoint.validate_protected_resource_request(self._uri(), 'GET', None, dict(self.headers), realms=[])
            if valid:
                self._send(200, {'Content-Type': 'application/json'}, json.dumps({'ok': True, 'client': req.client_key, 'query': dict(urllib.parse.parse_qsl(parsed.query))}))
            else:
                self._send(401, {'Content-Type': 'application/json'}, json.dumps({'ok': False}))
        else:
            self._send(404, {}, 'not found')


server = ThreadingHTTPServer((os.environ.get('OAUTH1_SERVER_HOST', '127.0.0.1'), 0), Handler)
print('READY %d' % server.server_address[1], flush=True)
server.serve_forever()
