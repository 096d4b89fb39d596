/**
 * The egress allowlist entries for peers on this machine (the OAuth server, upstreams and webhook
 * receivers of tests, benches and `npm start`): the egress guard refuses loopback unless allowed.
 */
export const LOOPBACK_PEERS = '127.0.0.1/32,::1/128,localhost';
