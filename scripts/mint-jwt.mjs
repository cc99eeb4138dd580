#!/usr/bin/env node
// Mints an HS256 JWT for local development, without dependencies.
//
// Usage: node scripts/mint-jwt.mjs --secret S --role anon|authenticated|service_role --ref PROJECT_ID
//                                  [--ttl-seconds N (default 31536000 = one year)] [--iss aura-dev] [--sub USER_ID]
// Prints the token on stdout. Exits 2 on bad arguments.
import { createHmac } from 'node:crypto'

function parseArgs(argv) {
  const args = {}
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]
    if (!flag.startsWith('--') || i + 1 >= argv.length) fail(`unexpected argument '${flag}'`)
    args[flag.slice(2)] = argv[++i]
  }
  return args
}

function fail(message) {
  process.stderr.write(`mint-jwt: ${message}\n` +
    'usage: mint-jwt.mjs --secret S --role R --ref PROJECT_ID [--ttl-seconds N] [--iss ISS] [--sub SUB]\n')
  process.exit(2)
}

const base64url = (data) => Buffer.from(data).toString('base64url')

const args = parseArgs(process.argv.slice(2))
for (const required of ['secret', 'role', 'ref']) {
  if (!args[required]) fail(`--${required} is required`)
}
if (Buffer.byteLength(args.secret, 'utf8') < 32) fail('--secret must be at least 32 bytes for HS256')
const ttlSeconds = Number(args['ttl-seconds'] ?? 365 * 24 * 3600)
if (!Number.isInteger(ttlSeconds)) fail('--ttl-seconds must be an integer')

const now = Math.floor(Date.now() / 1000)
const claims = { iss: args.iss ?? 'aura-dev', role: args.role, ref: args.ref, iat: now, exp: now + ttlSeconds }
if (args.sub) claims.sub = args.sub

const signingInput = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify(claims))}`
const signature = createHmac('sha256', args.secret).update(signingInput).digest('base64url')
process.stdout.write(`${signingInput}.${signature}\n`)
