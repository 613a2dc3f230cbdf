// The two jose functions decodeRedirectData uses, re-exported by name so that a bundler keeps only
// them (a dynamic `import('jose')` would pull in every algorithm jose has). Loaded lazily.
export { jwtDecrypt, jwtVerify } from 'jose';
