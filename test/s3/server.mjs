// test/s3/server.mjs — the test S3 server: @20minutes/s3rver (which verifies SigV4) on 127.0.0.1 and an
// ephemeral port, plus what the tests need and s3rver lacks:
//   - conditional create: PUT with `If-None-Match: *` answers 412 when the key exists and 409 while another
//     conditional write of the same key is in flight (s3rver itself ignores the header and overwrites);
//   - a fault mode: a share of requests is answered 500 / 503, or its connection is dropped before or after
//     the request took effect;
//   - an injected latency per request, and request counters (bench/s3);
//   - suffix ranges (the last N bytes of an object), which s3rver reads as the first N;
//   - session tokens (x-amz-security-token) checked when one is configured;
//   - virtual-hosted addressing: http://BUCKET.s3.localhost:PORT/KEY (curl resolves *.localhost to loopback).
// Control (no signature, not an S3 path): GET /__admin/mode?faults=0.3&latency_ms=20&conditional=1&suffix_ranges=1
// &session_token=T (empty: none required),
// GET /__admin/stats, GET /__admin/reset-stats.
//
//   node test/s3/server.mjs DIR [BUCKET ...]     prints {"port": N} on stdout; stops when stdin closes
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { createReadStream } from 'node:fs'
import fs from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const require = createRequire(path.join(here, '../interop/package.json'))
const S3rver = require('@20minutes/s3rver')
const S3Error = require('@20minutes/s3rver/lib/models/error')

const [dir, ...buckets] = process.argv.slice(2)
if (!dir) {
  console.error('usage: node test/s3/server.mjs DIR [BUCKET ...]')
  process.exit(2)
}

const mode = { faults: 0, latency_ms: 0, conditional: true, suffix_ranges: true, session_token: '' }
const stats = { requests: 0, get: 0, head: 0, put: 0, post: 0, delete: 0, list: 0, faults: 0, bytes_out: 0, suffix_ranges: 0, vhost: 0 }
const inFlight = new Set()

const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory: dir,
  vhostBuckets: false,
  configureBuckets: (buckets.length ? buckets : ['lake']).map((name) => ({ name })),
})

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

// first: control requests, counters, latency, faults
server.middleware.unshift(async function control(ctx, next) {
  if (ctx.path.startsWith('/__admin/')) {
    const what = ctx.path.slice('/__admin/'.length)
    if (what === 'mode') {
      if (ctx.query.faults !== undefined) mode.faults = Number(ctx.query.faults)
      if (ctx.query.latency_ms !== undefined) mode.latency_ms = Number(ctx.query.latency_ms)
      if (ctx.query.conditional !== undefined) mode.conditional = ctx.query.conditional !== '0'
      if (ctx.query.suffix_ranges !== undefined) mode.suffix_ranges = ctx.query.suffix_ranges !== '0'
      if (ctx.query.session_token !== undefined) mode.session_token = ctx.query.session_token
      ctx.body = JSON.stringify(mode)
    } else if (what === 'stats') {
      ctx.body = JSON.stringify(stats)
    } else if (what === 'reset-stats') {
      for (const k of Object.keys(stats)) stats[k] = 0
      ctx.body = '{}'
    } else {
      ctx.status = 404
    }
    ctx.type = 'application/json'
    return
  }
  stats.requests++
  const m = ctx.method.toLowerCase()
  if (m === 'get' && ctx.query['list-type'] !== undefined) stats.list++
  else if (m in stats) stats[m]++
  if (mode.latency_ms > 0) await sleep(mode.latency_ms)
  if (mode.faults > 0 && Math.random() < mode.faults) {
    stats.faults++
    const kind = Math.floor(Math.random() * 4)
    if (kind === 0) throw new S3Error('InternalError', 'injected fault')
    if (kind === 1) throw new S3Error('SlowDown', 'injected fault')
    if (kind === 2) {
      ctx.req.socket.destroy() // dropped before the request took effect
      ctx.respond = false
      return
    }
    await next() // dropped after the request took effect: the client cannot know
    ctx.req.socket.destroy()
    ctx.respond = false
    return
  }
  await next()
  if (Buffer.isBuffer(ctx.body)) stats.bytes_out += ctx.body.length
  else if (ctx.length) stats.bytes_out += ctx.length
})

// virtual-hosted addressing, http://BUCKET.s3.localhost:PORT/KEY: s3rver's own vhost support signs the wrong
// canonical URI (it puts the bucket in front of the path, where SigV4 signs the path as sent), so this server
// checks such requests itself, with SigV4 as S3 computes it and s3rver's credentials (S3RVER / S3RVER), then
// hands them on as path-style requests without a signature (s3rver accepts those).
const VHOST = /^([a-z0-9][a-z0-9.-]*[a-z0-9])\.s3\.localhost$/
const rfc3986 = (v) => encodeURIComponent(v).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())
const hmac = (key, data) => createHmac('sha256', key).update(data).digest()
function sigv4Valid(ctx, secret) {
  const auth = /^AWS4-HMAC-SHA256 Credential=([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
    ctx.get('authorization'))
  if (!auth) return false
  const [, credential, signed, signature] = auth
  const [, date, region, service, term] = credential.split('/')
  const amzDate = ctx.get('x-amz-date')
  const [rawPath, rawQuery = ''] = ctx.originalUrl.split('?')
  const query = rawQuery.split('&').filter(Boolean).map((kv) => {
    const [k, v = ''] = kv.split('=')
    return [rfc3986(decodeURIComponent(k)), rfc3986(decodeURIComponent(v.replace(/\+/g, ' ')))]
  }).sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0)).map(([k, v]) => `${k}=${v}`).join('&')
  const names = signed.split(';')
  const headers = names.map((h) => `${h}:${String(ctx.get(h)).trim().replace(/\s+/g, ' ')}\n`).join('')
  const canonical = [ctx.method, rawPath, query, headers, signed, ctx.get('x-amz-content-sha256') || 'UNSIGNED-PAYLOAD'].join('\n')
  const scope = `${date}/${region}/${service}/${term}`
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n')
  const key = hmac(hmac(hmac(hmac('AWS4' + secret, date), region), service), term)
  const want = Buffer.from(hmac(key, toSign).toString('hex'))
  const got = Buffer.from(signature)
  return want.length === got.length && timingSafeEqual(want, got)
}
server.middleware.splice(1, 0, async function virtualHosted(ctx, next) {
  const m = VHOST.exec(ctx.hostname)
  if (!m) return next()
  stats.vhost++
  if (ctx.get('authorization') && !sigv4Valid(ctx, 'S3RVER'))
    throw new S3Error('SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.')
  delete ctx.headers.authorization
  ctx.path = `/${m[1]}${ctx.path}`
  return next()
})

// just before the router: conditional create, checked after authentication (inside the store call)
server.middleware.splice(server.middleware.length - 1, 0, async function conditionalPut(ctx, next) {
  if (ctx.method !== 'PUT' || ctx.get('if-none-match') !== '*' || !mode.conditional) return next()
  const m = /^\/([^/]+)\/(.+)$/.exec(ctx.path)
  if (!m) return next()
  const bucket = m[1]
  const key = decodeURIComponent(m[2])
  const id = `${bucket}/${key}`
  if (inFlight.has(id)) {
    const e = new S3Error('ConditionalRequestConflict', 'A conditional request to this object is in flight', {})
    e.status = 409 // not in s3rver's table of codes
    throw e
  }
  inFlight.add(id)
  const store = ctx.store
  ctx.store = Object.create(store)
  // exists: its object file or its metadata (s3rver answers a PUT before its write stream has opened the file)
  const exists = async () =>
    (await store.existsObject(bucket, key)) ||
    (await fs.stat(store.getResourcePath(bucket, key, 'metadata.json')).then(() => true, () => false))
  ctx.store.putObject = async (object) => {
    if (await exists())
      throw new S3Error('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', {
        Condition: 'If-None-Match',
      })
    return store.putObject(object)
  }
  try {
    await next()
  } finally {
    inFlight.delete(id)
  }
})

// temporary credentials: with a session token configured, every request must carry it in x-amz-security-token
// (which SigV4 signs, so s3rver's signature check covers it too); S3's answers: none is 403 InvalidAccessKeyId
// (the temporary key id means nothing without its token), another one 400 InvalidToken
server.middleware.splice(server.middleware.length - 1, 0, async function sessionToken(ctx, next) {
  if (!mode.session_token) return next()
  const got = ctx.get('x-amz-security-token')
  if (!got) throw new S3Error('InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.')
  if (got !== mode.session_token) throw new S3Error('InvalidToken', 'The provided token is malformed or otherwise invalid.')
  return next()
})

// suffix ranges (Range: bytes=-N, the last N bytes, which S3 answers with 206 and Content-Range: bytes a-b/size):
// s3rver reads them as bytes=0-N. Answer them as S3 does, through the store call (after authentication).
server.middleware.splice(server.middleware.length - 1, 0, async function suffixRange(ctx, next) {
  const m = ctx.method === 'GET' ? /^bytes=-(\d+)$/.exec(ctx.get('range') || '') : null
  if (!m) return next()
  stats.suffix_ranges++
  if (!mode.suffix_ranges) {
    // a server that ignores the range: the whole object, 200
    delete ctx.headers.range
    return next()
  }
  const want = Number(m[1])
  const store = ctx.store
  ctx.store = Object.create(store)
  ctx.store.getObject = async (bucket, key) => {
    let size
    try {
      size = Number((await store.getMetadata(bucket, key))['content-length'])
    } catch (e) {
      if (e.code === 'ENOENT') return null
      throw e
    }
    // nothing to give of an empty object (or for N = 0): 416, as S3 answers
    if (size === 0 || want === 0) return store.getObject(bucket, key, { start: size + 1 })
    return store.getObject(bucket, key, { start: Math.max(0, size - want), end: size - 1 })
  }
  return next()
})

// the range of the first byte alone (Range: bytes=0-0): s3rver reads an end of 0 as "to the end" and sends the whole
// object (a one-byte blob at the start of a data file asks for exactly this). Answer it as S3 does: one byte, 206.
server.middleware.splice(server.middleware.length - 1, 0, async function firstByteRange(ctx, next) {
  if (ctx.method !== 'GET' || !/^bytes=0-0$/.test(ctx.get('range') || '')) return next()
  const store = ctx.store
  ctx.store = Object.create(store)
  ctx.store.getObject = async (bucket, key) => {
    const object = await store.getObject(bucket, key, { start: 0 })
    if (!object || !object.content) return object  // missing, or an empty object: s3rver's own answer (416)
    object.content.destroy()
    object.content = createReadStream(store.getResourcePath(bucket, key, 'object'), { start: 0, end: 0 })
    object.range = { start: 0, end: 0 }
    return object
  }
  return next()
})

// s3rver's listings with a delimiter never report a common prefix whose objects all lie two or more levels
// below it (it prunes those directories while walking): a dataset (prefix/name.lance/_versions/...) would be
// invisible. Fold a listing without delimiter into objects and common prefixes instead, as S3 does. Only
// objects count towards max-keys (so that the continuation token, the last object's key, stays valid); a
// prefix that the start key lies under was reported on an earlier page.
{
  const store = server.store
  const list = store.listObjects.bind(store)
  store.listObjects = async (bucket, options) => {
    const { delimiter, prefix = '', maxKeys = Infinity, startAfter = '' } = options
    if (!delimiter) return list(bucket, options)
    const all = await list(bucket, { ...options, delimiter: '', maxKeys: Infinity })
    const objects = []
    const prefixes = new Set()
    let isTruncated = false
    for (const obj of all.objects) {
      const rest = obj.key.slice(prefix.length)
      const i = rest.indexOf(delimiter)
      if (objects.length >= maxKeys) {
        isTruncated = true
        break
      }
      if (i === -1) objects.push(obj)
      else {
        const cp = prefix + rest.slice(0, i + delimiter.length)
        if (!startAfter.startsWith(cp)) prefixes.add(cp)
      }
    }
    return { objects, commonPrefixes: [...prefixes].sort(), isTruncated }
  }
}

const addr = await server.run()
process.stdout.write(JSON.stringify({ port: addr.port }) + '\n')
const stop = () => server.close().then(() => process.exit(0))
process.stdin.on('end', stop)
process.stdin.on('close', stop)
process.stdin.resume()
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
