// Drives ws-front's demo page in headless Debian Chromium (playwright-core, no downloaded
// browsers). Run by DemoPageE2EIT; protocol on stdout:
//   READY        both pages are subscribed and see each other's presence: insert the row now
//   ROW          page A shows the row whose body is $DEMO_ROW_BODY
//   REFUSED <status>  a page opened with $DEMO_EXPIRED_URL (an expired key) shows why (issue 40)
//   DEMO OK      the broadcast and the presence leave arrived too; exit 0
//   DEMO FAILED: <reason>  exit 1
// Env: DEMO_URL (the page URL with ?apikey=...), DEMO_EXPIRED_URL (the same with an expired key),
// DEMO_ROW_BODY, CHROMIUM (default /usr/bin/chromium).
import { chromium } from 'playwright-core'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const url = process.env.DEMO_URL
const expiredUrl = process.env.DEMO_EXPIRED_URL
const rowBody = process.env.DEMO_ROW_BODY
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium'
const WAIT = 20_000
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync']

function fail(reason) {
  console.log('DEMO FAILED: ' + reason)
  process.exitCode = 1
}

async function openPage(context, name) {
  const page = await context.newPage()
  page.on('console', (m) => { if (m.type() === 'error') console.error(`[${name}] console: ${m.text()}`) })
  page.on('pageerror', (e) => console.error(`[${name}] page error: ${e.message}`))
  await page.goto(url + '&name=' + encodeURIComponent(name))
  await page.locator('#status', { hasText: 'SUBSCRIBED' }).waitFor({ timeout: WAIT })
  return page
}

async function main() {
  if (!url || !expiredUrl || !rowBody) throw new Error('set DEMO_URL, DEMO_EXPIRED_URL and DEMO_ROW_BODY')
  const userDataDir = mkdtempSync(join(tmpdir(), 'aura-demo-chromium-'))
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath, headless: true, args: FLAGS })
  try {
    const a = await openPage(context, 'page-a')
    const b = await openPage(context, 'page-b')
    await a.locator('#presence li[data-key="page-b"]').waitFor({ timeout: WAIT })
    await b.locator('#presence li[data-key="page-a"]').waitFor({ timeout: WAIT })
    console.log('READY')

    await a.locator('#rows tr td', { hasText: rowBody }).first().waitFor({ timeout: WAIT })
    await b.locator('#rows tr td', { hasText: rowBody }).first().waitFor({ timeout: WAIT })
    console.log('ROW')

    await a.fill('#broadcast input[name=text]', 'hello from a')
    await a.click('#broadcast button')
    await b.locator('#log li', { hasText: 'page-a: hello from a' }).waitFor({ timeout: WAIT })

    await b.close()
    await a.locator('#presence li[data-key="page-b"]').waitFor({ state: 'detached', timeout: WAIT })

    const refused = await context.newPage()
    await refused.goto(expiredUrl + '&name=refused')
    const status = refused.locator('#status', { hasText: 'CHANNEL_ERROR' })
    await status.waitFor({ timeout: WAIT })
    console.log('REFUSED ' + (await status.textContent()))
    await refused.close()
    console.log('DEMO OK')
  } finally {
    await context.close()
    rmSync(userDataDir, { recursive: true, force: true })
  }
}

const timer = setTimeout(() => { fail('timed out after 90 s'); process.exit(1) }, 90_000)
main().catch((e) => fail(e.message.split('\n')[0])).finally(() => clearTimeout(timer))
