// Copies the browser (UMD) build of @supabase/supabase-js, at the version pinned in
// package.json / package-lock.json, into the ws-front jar's demo resources, so the demo page
// needs no CDN. Run after `npm ci` whenever the pinned version changes:
//   node e2e/js/vendor-demo.mjs          copy
//   node e2e/js/vendor-demo.mjs --check  exit 1 if the committed copy differs from npm's
import { readFileSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const pkg = join(here, 'node_modules/@supabase/supabase-js')
const source = join(pkg, 'dist/umd/supabase.js')
const target = join(here, '../../ws-front/src/main/resources/demo/supabase.js')
const version = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).version
const bytes = readFileSync(source)
const sha256 = createHash('sha256').update(bytes).digest('hex')

if (process.argv.includes('--check')) {
  const committed = readFileSync(target)
  if (!committed.equals(bytes)) {
    console.error(`demo/supabase.js differs from @supabase/supabase-js@${version} dist/umd/supabase.js (sha256 ${sha256}); run node e2e/js/vendor-demo.mjs`)
    process.exit(1)
  }
  console.log(`demo/supabase.js is @supabase/supabase-js@${version} (sha256 ${sha256})`)
} else {
  writeFileSync(target, bytes)
  console.log(`copied @supabase/supabase-js@${version} dist/umd/supabase.js (${bytes.length} bytes, sha256 ${sha256})`)
}
