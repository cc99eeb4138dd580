// The inspector page (docs/design.md D9): one channel of the unmodified realtime-js (from the
// supabase-js UMD build beside the demo page), joined with the key (and user token) typed in,
// every postgres_changes, broadcast, presence and system message listed with its event id and
// latency, a broadcast box, presence tracking, and, for a service_role key, the project's status
// from GET /inspector/status. Keys live in this page's memory only: never stored, never put in a
// URL. Tenant data is shown with textContent only.
/* global supabase */
(function () {
  'use strict'
  const $ = (id) => document.getElementById(id)
  const joinForm = $('join')
  const rowsEl = $('rows')
  const MAX_ROWS = 500
  const STATUS_EVERY_MS = 2000
  let client = null
  let channel = null
  let statusTimer = null
  let count = 0

  function el(tag, attrs, text) {
    const e = document.createElement(tag)
    Object.entries(attrs || {}).forEach(([k, v]) => e.setAttribute(k, v))
    if (text !== undefined) e.textContent = text
    return e
  }

  function setStatus(text, kind) {
    const s = $('status')
    s.textContent = text
    s.className = 'badge' + (kind ? ' ' + kind : '')
  }

  // ---- postgres_changes bindings ------------------------------------------------------------
  function addBinding(b) {
    const row = el('div', { class: 'binding' })
    const event = el('select', { name: 'event' })
    ;['*', 'INSERT', 'UPDATE', 'DELETE'].forEach((e) => event.append(el('option', { value: e }, e)))
    event.value = (b && b.event) || '*'
    const schema = el('input', { type: 'text', name: 'schema', value: (b && b.schema) || 'public' })
    const table = el('input', { type: 'text', name: 'table', placeholder: 'table (* for all)', value: (b && b.table) || '' })
    const filter = el('input', { type: 'text', name: 'filter', placeholder: 'filter, e.g. id=eq.1', value: (b && b.filter) || '' })
    const remove = el('button', { type: 'button', class: 'plain' }, '×')
    remove.addEventListener('click', () => row.remove())
    row.append(event, schema, table, filter, remove)
    $('bindings').append(row)
  }

  function bindings() {
    return [...document.querySelectorAll('#bindings .binding')]
      .map((row) => {
        const b = { event: row.querySelector('[name=event]').value, schema: row.querySelector('[name=schema]').value.trim() || 'public' }
        const table = row.querySelector('[name=table]').value.trim()
        const filter = row.querySelector('[name=filter]').value.trim()
        if (table) b.table = table
        if (filter) b.filter = filter
        return b
      })
      .filter((b) => b.table) // a row without a table is left out; '*' means every enabled table
  }

  // ---- the message list ---------------------------------------------------------------------
  function log(type, event, eventId, latencyMs, payload) {
    const tr = el('tr')
    const time = new Date()
    tr.append(
      el('td', { class: 'num' }, time.toISOString().slice(11, 23)),
      el('td', { class: 'type type-' + type }, type),
      el('td', {}, event == null ? '' : String(event)),
      el('td', { class: 'id' }, eventId == null ? '' : String(eventId)),
      el('td', { class: 'num' }, latencyMs == null || Number.isNaN(latencyMs) ? '' : Math.round(latencyMs) + ' ms'),
      el('td', { class: 'payload' }, payload === undefined ? '' : JSON.stringify(payload)))
    rowsEl.prepend(tr)
    while (rowsEl.children.length > MAX_ROWS) rowsEl.lastElementChild.remove()
    count++
    $('count').textContent = String(count)
  }

  function onChange(p) {
    const record = p.eventType === 'DELETE' ? p.old : p.new
    const eventId = record && record._aura_event_id
    const latency = p.commit_timestamp ? Date.now() - Date.parse(p.commit_timestamp) : null
    log('postgres_changes', p.eventType + ' ' + p.schema + '.' + p.table, eventId, latency, p)
  }

  function onBroadcast(m) {
    const sentAt = m.payload && typeof m.payload.sent_at === 'number' ? m.payload.sent_at : null
    log('broadcast', m.event, m.meta && m.meta.id, sentAt == null ? null : Date.now() - sentAt, m.payload)
  }

  function renderPresence() {
    const state = channel ? channel.presenceState() : {}
    $('presence').replaceChildren(...Object.keys(state).sort().map((key) => {
      const metas = state[key].map((m) => { const c = Object.assign({}, m); delete c.presence_ref; return c })
      const li = el('li', { 'data-key': key }, key + ' ' + JSON.stringify(metas))
      return li
    }))
  }

  // ---- join and leave -----------------------------------------------------------------------
  function claimsOf(jwt) {
    try {
      const part = jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')
      return JSON.parse(atob(part + '='.repeat((4 - (part.length % 4)) % 4)))
    } catch (e) {
      return null
    }
  }

  function describeKey(apikey, token) {
    const k = claimsOf(apikey)
    const t = token ? claimsOf(token) : null
    const key = k ? 'key: ' + (k.role || '?') + ' of ' + (k.ref || k.project_id || '?') : 'key: opaque'
    return key + (t ? ', user: ' + (t.role || '?') + ' ' + (t.sub || '') : token ? ', user token' : '')
  }

  function leave() {
    if (statusTimer) clearInterval(statusTimer)
    statusTimer = null
    if (client) client.removeAllChannels()
    if (client) client.disconnect()
    client = null
    channel = null
    renderPresence()
    setButtons(false)
    setStatus('not joined')
  }

  function setButtons(joined) {
    $('leave-button').disabled = !joined
    document.querySelectorAll('#broadcast button, #track button, #untrack').forEach((b) => { b.disabled = !joined })
  }

  function join(e) {
    e.preventDefault()
    const apikey = joinForm.apikey.value.trim()
    if (!apikey) return setStatus('an API key is needed', 'bad')
    const token = joinForm.token.value.trim()
    const name = joinForm.channel.value.trim() || 'room-1'
    leave()
    const wsUrl = location.origin.replace(/^http/, 'ws') + '/realtime/v1'
    const options = { params: { apikey: apikey } }
    if (token) options.accessToken = () => Promise.resolve(token)
    client = new supabase.RealtimeClient(wsUrl, options)
    const config = {
      private: joinForm.private.checked,
      broadcast: { self: joinForm.self.checked },
      presence: { key: joinForm.presenceKey.value.trim() },
      postgres_changes_options: { event_id: true },
    }
    channel = client.channel(name, { config: config })
    bindings().forEach((b) => channel.on('postgres_changes', b, onChange))
    channel
      .on('broadcast', { event: '*' }, onBroadcast)
      .on('presence', { event: 'sync' }, renderPresence)
      .on('presence', { event: 'join' }, (p) => log('presence', 'join', null, null, { key: p.key, metas: p.newPresences }))
      .on('presence', { event: 'leave' }, (p) => log('presence', 'leave', null, null, { key: p.key, metas: p.leftPresences }))
      .on('system', {}, (m) => log('system', m.status || m.extension, null, null, m))
      .subscribe((status, err) => {
        setStatus(status + (err ? ': ' + err.message : ''), status === 'SUBSCRIBED' ? 'ok' : status === 'CLOSED' ? '' : 'bad')
        if (status === 'SUBSCRIBED') setButtons(true)
      })
    $('whoami').textContent = describeKey(apikey, token)
    pollStatus(apikey)
  }

  // ---- broadcast and presence ---------------------------------------------------------------
  function parseJson(text) {
    try {
      return { value: JSON.parse(text) }
    } catch (e) {
      return { error: 'not JSON: ' + e.message }
    }
  }

  $('broadcast').addEventListener('submit', (e) => {
    e.preventDefault()
    const parsed = parseJson(e.target.payload.value)
    if (parsed.error) return log('system', 'inspector', null, null, parsed.error)
    let payload = parsed.value
    if (payload && typeof payload === 'object' && !Array.isArray(payload)) payload = Object.assign({}, payload, { sent_at: Date.now() })
    channel.send({ type: 'broadcast', event: e.target.event.value.trim() || 'message', payload: payload })
      .then((r) => { if (r !== 'ok') log('system', 'inspector', null, null, 'send: ' + r) })
  })

  $('track').addEventListener('submit', (e) => {
    e.preventDefault()
    const parsed = parseJson(e.target.payload.value)
    if (parsed.error) return log('system', 'inspector', null, null, parsed.error)
    channel.track(parsed.value).then((r) => { if (r !== 'ok') log('system', 'inspector', null, null, 'track: ' + r) })
  })
  $('untrack').addEventListener('click', () => channel && channel.untrack())

  // ---- the project's status (service_role keys) ---------------------------------------------
  function pollStatus(apikey) {
    const tick = () => fetch('/inspector/status', { headers: { apikey: apikey }, cache: 'no-store' })
      .then((r) => r.json().then((body) => ({ ok: r.ok, status: r.status, body: body })))
      .then(showStatus)
      .catch((err) => showStatus({ ok: false, status: 0, body: { error: String(err) } }))
    tick()
    statusTimer = setInterval(tick, STATUS_EVERY_MS)
  }

  const both = (p) => p.total + ' (here ' + p.here + ')'
  const bytes = (n) => (n == null ? 'unknown' : n < 1024 ? n + ' B' : n < 1048576 ? (n / 1024).toFixed(1) + ' KiB' : (n / 1048576).toFixed(1) + ' MiB')

  function showStatus(r) {
    const state = $('project-state')
    if (!r.ok) {
      $('project-status').hidden = true
      $('project-note').textContent = (r.body && r.body.error) || 'HTTP ' + r.status
      state.textContent = r.status === 403 ? 'not a service key' : 'unavailable'
      state.className = 'badge'
      return
    }
    const s = r.body
    $('project-status').hidden = false
    $('project-note').textContent = 'Refreshed every 2 s from ws-front ' + s.instance + '.'
    const active = s.cdc.cdc_active
    state.textContent = active === true ? 'CDC active' : active === false ? 'CDC inactive' : 'CDC unknown'
    state.className = 'badge ' + (active === true ? 'ok' : 'bad')
    $('p-project').textContent = s.project
    $('cdc-active').textContent = String(active)
    $('cdc-reason').textContent = s.cdc.reason || '—'
    $('slot-lag').textContent = bytes(s.cdc.slot_lag_bytes)
    $('status-age').textContent = s.cdc.status_age_ms < 0 ? 'no status yet' : (s.cdc.status_age_ms / 1000).toFixed(1) + ' s'
    $('u-connections').textContent = both(s.usage.connections)
    $('u-joins').textContent = both(s.usage.joins_per_second)
    $('u-events').textContent = both(s.usage.events_per_second)
    $('u-presence').textContent = both(s.usage.presence_events_per_second)
    $('u-checks').textContent = both(s.usage.checks_per_second)
    $('u-refused').textContent = both(s.usage.refused_per_second)
    $('u-refused-here').textContent = Object.entries(s.usage.refused_here).map(([k, v]) => k + ' ' + v).join(', ')
    $('quarantine-changes').textContent = s.quarantine.changes + ' (' + bytes(s.quarantine.bytes) + ')' + (s.held_known ? '' : ' ?')
    $('late-changes').textContent = s.late_lane.changes + ' (' + bytes(s.late_lane.bytes) + ')'
    $('limits').textContent = s.limits.max_concurrent_users + ' users, ' + s.limits.max_joins_per_second + ' joins/s, ' +
      s.limits.max_events_per_second + ' events/s'
  }

  joinForm.addEventListener('submit', join)
  $('leave-button').addEventListener('click', leave)
  $('add-binding').addEventListener('click', () => addBinding())
  $('clear').addEventListener('click', () => { rowsEl.replaceChildren(); count = 0; $('count').textContent = '0' })
  addBinding({ event: '*', schema: 'public', table: '' })
})()
