/**
 * Preloaded (`node --require`) into the tools we did not write that the contract checks run: Prism
 * (test/contract/prism.ts) and Redocly CLI (scripts/lint-openapi.mjs). Any outgoing connection to
 * an address other than loopback throws, so they only ever talk to the sandbox on 127.0.0.1: no
 * fetched `$ref`, no telemetry, no update check, whatever their versions do.
 */
const net = require('node:net');

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;
const connect = net.Socket.prototype.connect;

/** The host a `connect` call names, or `undefined` for a local socket path. */
function hostOf(args) {
  const [first, second] = args;
  // net.connect() and http's agents hand the socket their normalised arguments: `[options, callback]`.
  const options = Array.isArray(first) ? first[0] : first;
  if (options && typeof options === 'object') return options.path ? undefined : (options.host ?? 'localhost');
  if (typeof options === 'number' || /^\d+$/.test(String(options))) return typeof second === 'string' ? second : 'localhost';
  return undefined;
}

net.Socket.prototype.connect = function loopbackOnly(...args) {
  const host = hostOf(args);
  if (host !== undefined && !LOOPBACK.test(String(host).replace(/^\[|\]$/g, ''))) {
    process.stderr.write(`loopback-only: refused a connection to ${host}\n`);
    throw new Error(`loopback-only: refused a connection to ${host}`);
  }
  return connect.apply(this, args);
};
