// Drives ws-front's inspector page in headless Debian Chromium (playwright-core, no downloaded
// browsers). Run by InspectorPageE2EIT; protocol on stdout:
//   READY                        both pages joined the private channel and see each other: insert the row now
//   ROW <event id> <latency ms>  page A listed the row's postgres_changes message
//   PUBLIC ROW <event id>        page C (anon key, public channel) listed it too
//   BROADCAST <latency ms>       page A listed page B's broadcast
//   STATUS <connections> | <quarantined>   page A's project status (service key)
//   USER STATUS <text>           what page B (anon key + user token) shows instead of the status
//   INSPECTOR OK                 screenshots written, no script error or CSP violation; exit 0
//   INSPECTOR FAILED: <reason>   exit 1
// Env: INSPECTOR_URL, SERVICE_KEY, ANON_KEY, USER_TOKEN, CHANNEL, TABLE, ROW_BODY, SHOTS_DIR,
// CHROMIUM (default /usr/bin/chromium).
import { chromium } from 'playwright-core'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const env = process.env
const executablePath = env.CHROMIUM || '/usr/bin/chromium'
const WAIT = 30_000
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync']

const problems = []

function fail(reason) {
  console.log('INSPECTOR FAILED: ' + reason)
  process.exitCode = 1
}

async function openAndJoin(context, name, { apikey, token, presenceKey, table, channel = env.CHANNEL, isPrivate = true }) {
  const page = await context.newPage()
  await page.setViewportSize({ width: 1440, height: 900 })
  page.on('console', (m) => {
    if (m.type() !== 'error') return
    console.error(`[${name}] console: ${m.text()}`)
    // a script, style or connection the page's Content-Security-Policy blocked is a bug of the page
    if (/Content Security Policy/i.test(m.text())) problems.push(`[${name}] ${m.text()}`)
  })
  page.on('pageerror', (e) => problems.push(`[${name}] page error: ${e.message}`))
  await page.goto(env.INSPECTOR_URL)
  await page.fill('input[name=apikey]', apikey)
  if (token) await page.fill('input[name=token]', token)
  await page.fill('input[name=channel]', channel)
  await page.setChecked('input[name=private]', isPrivate)
  await page.fill('input[name=presenceKey]', presenceKey)
  await page.fill('#bindings input[name=table]', table || '')
  await page.click('#join-button')
  await page.locator('#status', { hasText: 'SUBSCRIBED' }).waitFor({ timeout: WAIT })
  await page.click('#track button[type=submit]')
  return page
}

async function main() {
  for (const v of ['INSPECTOR_URL', 'SERVICE_KEY', 'ANON_KEY', 'USER_TOKEN', 'CHANNEL', 'TABLE', 'ROW_BODY', 'SHOTS_DIR']) {
    if (!env[v]) throw new Error('set ' + v)
  }
  mkdirSync(env.SHOTS_DIR, { recursive: true })
  const userDataDir = mkdtempSync(join(tmpdir(), 'aura-inspector-chromium-'))
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath, headless: true, args: FLAGS })
  try {
    const a = await openAndJoin(context, 'service', { apikey: env.SERVICE_KEY, presenceKey: 'inspector-a', table: env.TABLE })
    const b = await openAndJoin(context, 'user', { apikey: env.ANON_KEY, token: env.USER_TOKEN, presenceKey: 'user-b' })
    await a.locator('#presence li[data-key="user-b"]').waitFor({ timeout: WAIT })
    await b.locator('#presence li[data-key="inspector-a"]').waitFor({ timeout: WAIT })
    // a public channel with the anon key alone, as an app's anonymous client joins it
    const c = await openAndJoin(context, 'public', { apikey: env.ANON_KEY, presenceKey: 'anon-c', table: env.TABLE, channel: 'lobby', isPrivate: false })
    await a.locator('#cdc-active', { hasText: 'true' }).waitFor({ timeout: WAIT })
    console.log('READY')

    const row = a.locator('#rows tr', { hasText: env.ROW_BODY }).filter({ hasText: 'postgres_changes' }).first()
    await row.waitFor({ timeout: WAIT })
    const cells = await row.locator('td').allTextContents()
    console.log('ROW ' + cells[3] + ' ' + cells[4].replace(' ms', ''))
    const publicRow = c.locator('#rows tr', { hasText: env.ROW_BODY }).filter({ hasText: 'postgres_changes' }).first()
    await publicRow.waitFor({ timeout: WAIT })
    console.log('PUBLIC ROW ' + (await publicRow.locator('td').allTextContents())[3])

    await b.fill('#broadcast input[name=event]', 'hello')
    await b.fill('#broadcast textarea[name=payload]', '{"text": "from the user page"}')
    await b.click('#broadcast button[type=submit]')
    const bc = a.locator('#rows tr', { hasText: 'from the user page' }).filter({ hasText: 'broadcast' }).first()
    await bc.waitFor({ timeout: WAIT })
    const bcCells = await bc.locator('td').allTextContents()
    console.log('BROADCAST ' + bcCells[4].replace(' ms', ''))

    // the status refreshes every 2 s: wait until it counts both pages' connections
    await a.waitForFunction(() => /^([2-9]|\d\d+) /.test(document.getElementById('u-connections').textContent), null, { timeout: WAIT })
    await a.locator('#quarantine-changes', { hasText: /^[1-9]/ }).waitFor({ timeout: WAIT })
    console.log('STATUS ' + (await a.textContent('#u-connections')) + ' | ' + (await a.textContent('#quarantine-changes')))
    await b.locator('#project-state', { hasText: 'not a service key' }).waitFor({ timeout: WAIT })
    console.log('USER STATUS ' + (await b.textContent('#project-note')))
    if (await b.locator('#project-status').isVisible()) throw new Error('the user page shows the project status table')

    await a.screenshot({ path: join(env.SHOTS_DIR, 'inspector-service-key.png'), fullPage: true })
    await b.screenshot({ path: join(env.SHOTS_DIR, 'inspector-user-token.png'), fullPage: true })
    await c.screenshot({ path: join(env.SHOTS_DIR, 'inspector-public-anon.png'), fullPage: true })
    if (problems.length > 0) throw new Error(problems.join(' | '))
    console.log('INSPECTOR OK')
  } finally {
    await context.close()
    rmSync(userDataDir, { recursive: true, force: true })
  }
}

const timer = setTimeout(() => { fail('timed out after 150 s'); process.exit(1) }, 150_000)
main().catch((e) => fail(e.message.split('\n')[0])).finally(() => clearTimeout(timer))
