// The demo page's logic: one supabase-js channel with postgres_changes on public.messages,
// presence keyed by the visitor's name, and broadcasts (self: true, so you see your own).
// The anon key comes from ?apikey= or the input box; ?name= sets the presence key.
/* global supabase */
(function () {
  'use strict'
  const params = new URLSearchParams(location.search)
  const connectForm = document.getElementById('connect')
  const statusEl = document.getElementById('status')
  const rowsEl = document.getElementById('rows')
  const presenceEl = document.getElementById('presence')
  const logEl = document.getElementById('log')
  let channel = null
  let client = null

  connectForm.apikey.value = params.get('apikey') || ''
  connectForm.name.value = params.get('name') || 'guest-' + Math.random().toString(36).slice(2, 6)

  function setStatus(text) {
    statusEl.textContent = text
  }

  function upsertRow(row) {
    let tr = rowsEl.querySelector('tr[data-id="' + CSS.escape(String(row.id)) + '"]')
    if (!tr) {
      tr = document.createElement('tr')
      tr.dataset.id = String(row.id)
      rowsEl.prepend(tr)
    }
    tr.replaceChildren(...['id', 'body', 'author', 'created_at'].map((col) => {
      const td = document.createElement('td')
      td.textContent = row[col] == null ? '' : String(row[col])
      return td
    }))
  }

  function removeRow(row) {
    const tr = rowsEl.querySelector('tr[data-id="' + CSS.escape(String(row.id)) + '"]')
    if (tr) tr.remove()
  }

  function onChange(change) {
    if (change.eventType === 'DELETE') removeRow(change.old)
    else upsertRow(change.new)
  }

  function renderPresence() {
    const state = channel.presenceState()
    presenceEl.replaceChildren(...Object.keys(state).sort().map((key) => {
      const li = document.createElement('li')
      li.dataset.key = key
      li.textContent = key + (state[key].length > 1 ? ' (' + state[key].length + ' tabs)' : '')
      return li
    }))
  }

  function log(text) {
    const li = document.createElement('li')
    li.textContent = text
    logEl.prepend(li)
  }

  function connect(apikey, name) {
    if (client) client.removeAllChannels()
    client = supabase.createClient(location.origin, apikey, {
      auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    })
    channel = client.channel('demo', { config: { broadcast: { self: true }, presence: { key: name } } })
    channel
      .on('postgres_changes', { event: '*', schema: 'public', table: 'messages' }, onChange)
      .on('presence', { event: 'sync' }, renderPresence)
      .on('broadcast', { event: 'message' }, ({ payload }) => log(payload.from + ': ' + payload.text))
      .on('system', {}, (msg) => {
        if (msg.status === 'error') log('system: ' + msg.message)
      })
      .subscribe((status, err) => {
        setStatus(status + (err ? ' (' + err.message + ')' : ''))
        if (status === 'SUBSCRIBED') channel.track({ name: name, online_at: new Date().toISOString() })
      })
  }

  connectForm.addEventListener('submit', (e) => {
    e.preventDefault()
    if (connectForm.apikey.value) connect(connectForm.apikey.value.trim(), connectForm.name.value.trim())
  })

  document.getElementById('broadcast').addEventListener('submit', (e) => {
    e.preventDefault()
    const input = e.target.text
    if (channel && input.value) {
      channel.send({ type: 'broadcast', event: 'message', payload: { from: connectForm.name.value, text: input.value } })
      input.value = ''
    }
  })

  if (connectForm.apikey.value) connect(connectForm.apikey.value, connectForm.name.value)
})()
