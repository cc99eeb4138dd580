// Drives the unmodified @supabase/realtime-js client for aura-realtime's end-to-end tests.
//
// Protocol (newline-delimited JSON; stdout carries ONLY these lines, diagnostics go to stderr):
//
// Commands (stdin), each may carry "id"; every command is answered by
//   {"type":"ack","id":..,"result":..}   or   {"type":"error","id":..,"message":..,"stack":..}
//   ping                                         -> "pong"
//   connect      {url, apikey, vsn?, options?, trace?}
//                 creates the RealtimeClient (transport: ws, params.apikey, vsn "1.0.0"|"2.0.0",
//                 options: heartbeatIntervalMs, timeout, params, accessToken (a string), logLevel,
//                 ...) and calls connect(); result {endpoint}. trace: true also emits every frame.
//   channel      {name, config?}                 -> client.channel(name, {config}); result {topic}
//   on           {channel, kind, filter?}        kind: postgres_changes | broadcast | presence | system
//                 a postgres_changes filter may carry filterBuilder: [[method, ...args], ...], calls on
//                 realtime-js's postgresChangesFilter() (eq, like, in, not, ...) passed as filter.filter
//   subscribe    {channel, timeout?}             status callbacks become "status" events
//   send         {channel, event, payload, pushType?, persist?} result: what channel.send resolved to ("ok", ...)
//                 persist: true or {ttl: seconds}, passed to realtime-js as given
//   httpSend     {channel, event, payload, persist?} result: what channel.httpSend resolved to (persist as for send)
//   track        {channel, payload}              result: what channel.track resolved to
//   untrack      {channel}
//   presenceState{channel}                       result: channel.presenceState()
//   channelState {channel}                       result: channel.state ("joined", "errored", ...)
//   setAuth      {token}                         await client.setAuth(token)
//   unsubscribe  {channel}                       result: what channel.unsubscribe resolved to
//   removeChannel{channel}                       result: what client.removeChannel resolved to
//   removeAll                                    client.removeAllChannels()
//   disconnect   {code?, reason?}                client.disconnect(...)
//   isConnected                                  result: boolean
//   exit                                         exits the process after the ack
//
// Events (stdout):
//   {"type":"postgres_changes","channel":name,"payload":<exactly what realtime-js gave the callback>}
//   {"type":"broadcast","channel":name,"payload":..,"at":<Date.now() when the callback ran>}
//   {"type":"presence","event":"sync"|"join"|"leave","channel":name,"payload":..,"state":presenceState()}
//   {"type":"system","channel":name,"payload":..}
//   {"type":"status","channel":name,"status":"SUBSCRIBED"|"CHANNEL_ERROR"|"TIMED_OUT"|"CLOSED","error":{message,cause}|null}
//   {"type":"socket","event":"open"|"close"|"error", code?, reason?, message?}
//   {"type":"frame","direction":"in"|"out","data":..}           (only with connect.trace)
//   {"type":"exception","message":..,"stack":..}                (uncaught errors; the driver keeps running)
// Binary payloads are written as {"$binary": "<base64>"}; a send/httpSend payload written that way
// is handed to realtime-js as an ArrayBuffer (a binary broadcast).

import { createInterface } from 'node:readline'
import { RealtimeClient, postgresChangesFilter } from '@supabase/realtime-js'
import WebSocket from 'ws'

// realtime-js or its dependencies must never write to stdout: that is our protocol channel.
console.log = console.error
console.info = console.error
console.debug = console.error

let client = null
let traceFrames = false
const channels = new Map()

function toJsonSafe(_key, value) {
  if (typeof value === 'bigint') return value.toString()
  if (value instanceof ArrayBuffer) return { $binary: Buffer.from(value).toString('base64') }
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    return { $binary: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') }
  }
  if (value instanceof Error) return describeError(value)
  return value
}

function fromJsonSafe(value) {
  if (value && typeof value === 'object' && typeof value.$binary === 'string' && Object.keys(value).length === 1) {
    const bytes = Buffer.from(value.$binary, 'base64')
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)
  }
  return value
}

// JSON.stringify recurses: a payload nested some thousands of levels (the product carries 4,096,
// docs/design.md C13) overflows V8's stack. This one walks the value with a stack of its own.
function stringifyDeep(root) {
  try {
    return JSON.stringify(root, toJsonSafe)
  } catch (err) {
    if (!(err instanceof RangeError)) throw err
  }
  const prepare = (key, value) => {
    if (value !== null && typeof value === 'object' && typeof value.toJSON === 'function') value = value.toJSON(key)
    return toJsonSafe(key, value)
  }
  let out = ''
  const stack = []
  let value = prepare('', root)
  for (;;) {
    if (value !== null && typeof value === 'object') {
      const isArray = Array.isArray(value)
      const keys = isArray ? null : Object.keys(value).filter((k) => value[k] !== undefined && typeof value[k] !== 'function')
      out += isArray ? '[' : '{'
      stack.push({ obj: value, isArray, keys, i: 0 })
    } else {
      out += value === undefined || typeof value === 'function' ? 'null' : JSON.stringify(value)
    }
    for (;;) {
      const top = stack[stack.length - 1]
      if (!top) return out
      const n = top.isArray ? top.obj.length : top.keys.length
      if (top.i < n) {
        if (top.i > 0) out += ','
        if (top.isArray) {
          value = prepare(String(top.i), top.obj[top.i])
        } else {
          const k = top.keys[top.i]
          out += JSON.stringify(k) + ':'
          value = prepare(k, top.obj[k])
        }
        top.i++
        break
      }
      out += top.isArray ? ']' : '}'
      stack.pop()
    }
  }
}

function emit(event) {
  let line
  try {
    line = stringifyDeep(event)
  } catch (err) {
    line = JSON.stringify({ type: 'exception', message: `cannot serialise ${event?.type} event: ${err.message}` })
  }
  process.stdout.write(line + '\n')
}

function describeError(err) {
  if (err === undefined || err === null) return null
  if (!(err instanceof Error)) return { message: String(err) }
  const described = { message: err.message }
  if (err.cause !== undefined) described.cause = err.cause
  return described
}

// The WebSocket transport handed to realtime-js: plain `ws`, plus socket lifecycle events.
class TracedWebSocket extends WebSocket {
  constructor(address, protocols) {
    super(address, protocols)
    this.on('open', () => emit({ type: 'socket', event: 'open' }))
    this.on('close', (code, reason) => emit({ type: 'socket', event: 'close', code, reason: reason.toString() }))
    this.on('error', (err) => emit({ type: 'socket', event: 'error', message: err.message }))
    if (traceFrames) {
      this.on('message', (data, isBinary) =>
        emit({ type: 'frame', direction: 'in', data: isBinary ? data : data.toString() }))
    }
  }

  send(data, ...rest) {
    if (traceFrames) emit({ type: 'frame', direction: 'out', data: typeof data === 'string' ? data : Buffer.from(data) })
    return super.send(data, ...rest)
  }
}

function requireClient() {
  if (!client) throw new Error('not connected: send a connect command first')
  return client
}

function requireChannel(name) {
  const channel = channels.get(name)
  if (!channel) throw new Error(`unknown channel '${name}': send a channel command first`)
  return channel
}

function logToStderr(kind, msg, data) {
  let text
  try {
    text = data === undefined ? '' : stringifyDeep(data)
  } catch (err) {
    text = `(not printable: ${err.message})`
  }
  process.stderr.write(`[realtime-js] ${kind}: ${msg} ${text.length > 4000 ? text.slice(0, 4000) + '...' : text}\n`)
}

const handlers = {
  ping: () => 'pong',

  connect: async ({ url, apikey, vsn, options = {}, trace = false }) => {
    if (!url) throw new Error('connect needs "url"')
    if (!apikey) throw new Error('connect needs "apikey"')
    if (client) {
      await client.disconnect()
      channels.clear()
    }
    traceFrames = trace
    const { params = {}, accessToken, ...rest } = options
    const clientOptions = {
      ...rest,
      params: { ...params, apikey },
      transport: TracedWebSocket,
      logger: logToStderr,
    }
    if (vsn) clientOptions.vsn = vsn
    if (typeof accessToken === 'string') clientOptions.accessToken = async () => accessToken
    client = new RealtimeClient(url, clientOptions)
    client.connect()
    return { endpoint: client.endpointURL() }
  },

  channel: ({ name, config = {} }) => {
    if (!name) throw new Error('channel needs "name"')
    const channel = requireClient().channel(name, { config })
    channels.set(name, channel)
    return { topic: channel.topic }
  },

  on: ({ channel: name, kind, filter = {} }) => {
    const channel = requireChannel(name)
    switch (kind) {
      case 'postgres_changes':
        if (Array.isArray(filter.filterBuilder)) {
          const { filterBuilder, ...rest } = filter
          let builder = postgresChangesFilter()
          for (const [method, ...args] of filterBuilder) builder = builder[method](...args)
          filter = { ...rest, filter: builder }
        }
        channel.on(kind, filter, (payload) => emit({ type: kind, channel: name, payload }))
        break
      case 'broadcast':
        channel.on(kind, filter, (payload) => emit({ type: kind, channel: name, payload, at: Date.now() }))
        break
      case 'system':
        channel.on(kind, filter, (payload) => emit({ type: kind, channel: name, payload }))
        break
      case 'presence':
        if (!filter.event) throw new Error('presence listeners need filter.event: sync, join or leave')
        channel.on('presence', filter, (payload) =>
          emit({ type: 'presence', event: filter.event, channel: name, payload, state: channel.presenceState() }))
        break
      default:
        throw new Error(`unknown listener kind '${kind}' (postgres_changes, broadcast, presence, system)`)
    }
    return null
  },

  subscribe: ({ channel: name, timeout }) => {
    const callback = (status, err) => emit({ type: 'status', channel: name, status, error: describeError(err) })
    if (timeout === undefined) {
      requireChannel(name).subscribe(callback)
    } else {
      requireChannel(name).subscribe(callback, timeout)
    }
    return null
  },

  // `type` is the command name ("send"), so the push type travels as `pushType`
  send: ({ channel: name, event, payload, pushType = 'broadcast', persist = false }) =>
    requireChannel(name).send(
      persist
        ? { type: pushType, event, payload: fromJsonSafe(payload), persist }
        : { type: pushType, event, payload: fromJsonSafe(payload) }),

  httpSend: ({ channel: name, event, payload, persist = false }) => {
    const channel = requireChannel(name)
    if (typeof channel.httpSend !== 'function') throw new Error('this realtime-js has no channel.httpSend')
    return channel.httpSend(event, fromJsonSafe(payload), persist ? { persist } : {})
  },

  track: ({ channel: name, payload = {} }) => requireChannel(name).track(payload),
  untrack: ({ channel: name }) => requireChannel(name).untrack(),
  presenceState: ({ channel: name }) => requireChannel(name).presenceState(),
  channelState: ({ channel: name }) => requireChannel(name).state,

  setAuth: async ({ token = null }) => {
    await requireClient().setAuth(token)
    return null
  },

  unsubscribe: ({ channel: name }) => requireChannel(name).unsubscribe(),

  removeChannel: async ({ channel: name }) => {
    const result = await requireClient().removeChannel(requireChannel(name))
    channels.delete(name)
    return result
  },

  removeAll: async () => {
    const result = await requireClient().removeAllChannels()
    channels.clear()
    return result
  },

  disconnect: async ({ code, reason }) => {
    if (!client) return 'ok'
    return client.disconnect(code, reason)
  },

  isConnected: () => (client ? client.isConnected() : false),

  exit: () => {
    setImmediate(() => process.exit(0))
    return null
  },
}

async function handle(line) {
  if (!line.trim()) return
  let command
  try {
    command = JSON.parse(line)
  } catch (err) {
    emit({ type: 'error', id: null, message: `not JSON: ${err.message}` })
    return
  }
  const { id = null, type } = command
  const handler = Object.hasOwn(handlers, type) ? handlers[type] : null
  if (!handler) {
    emit({ type: 'error', id, message: `unknown command '${type}'; known: ${Object.keys(handlers).join(', ')}` })
    return
  }
  try {
    const result = await handler(command)
    emit({ type: 'ack', id, result: result === undefined ? null : result })
  } catch (err) {
    emit({ type: 'error', id, message: err?.message ?? String(err), stack: err?.stack })
  }
}

process.on('uncaughtException', (err) => emit({ type: 'exception', message: err?.message ?? String(err), stack: err?.stack }))
process.on('unhandledRejection', (err) => emit({ type: 'exception', message: err?.message ?? String(err), stack: err?.stack }))

const input = createInterface({ input: process.stdin, crlfDelay: Infinity })
input.on('line', (line) => {
  handle(line)
})
// The test JVM closed our stdin (or died): leave quietly.
input.on('close', async () => {
  try {
    if (client) await Promise.race([client.disconnect(), new Promise((resolve) => setTimeout(resolve, 1000))])
  } finally {
    process.exit(0)
  }
})
process.stderr.write(`driver.mjs ready (node ${process.version})\n`)
