// test/interop/namespace/rest-server.mjs — a Lance REST namespace for the tests, on 127.0.0.1 and an ephemeral port,
// following the namespace's REST spec (lance-namespace docs/src/rest.yaml) for the operations lt_fdw uses:
//   GET  /v1/namespace/{id}/table/list?limit=&page_token=   ListTables ({id} "%24" = the root; parts joined by "$")
//   POST /v1/table/{id}/describe                            DescribeTable: location, storage_options (vended
//                                                          credentials with expires_at_millis), managed_versioning
//   POST /v1/table/{id}/exists, /v1/namespace/{id}/exists   TableExists / NamespaceExists
//   POST /v1/table/{id}/declare                             DeclareTable: the name reserved at
//                                                          <declare_root>/<name>.lance (409/5 when it exists)
//   POST /v1/table/{id}/deregister                          DeregisterTable: the name forgotten (data kept)
//   POST /v1/table/{id}/version/create                      CreateTableVersion: the staged manifest put in place
//                                                          (409 when the version exists, or while refusing commits)
// Errors are {"error", "code"} with the spec's status and code (401/16 unauthenticated, 404/4 table not found,
// 404/1 namespace not found, 409/12 version exists, 409/14 concurrent modification).
// Authentication: when configured, every request must carry x-api-key or Authorization: Bearer.
// Control (loopback, no authentication): POST /__test/config merges a JSON object into the configuration below;
// GET /__test/stats gives the request counts per operation.
//
//   node rest-server.mjs CONFIG.json     prints {"port": N} on stdout; stops when stdin closes
// CONFIG: {"api_key": K | null, "bearer": T | null, "page_size": N,
//          "tables": {"a$b$t": {"location": "s3://...", "managed_versioning": bool}},
//          "namespaces": ["a", "a$b"],
//          "credentials": {"aws_access_key_id", "aws_secret_access_key", "aws_session_token", "expires_in_ms"} | null,
//          "storage": {extra storage options vended with every table (the engine's endpoint)},
//          "declare_root": "s3://..." (where DeclareTable puts tables), "refuse_commits": bool, "delay_ms": N (every answer waits that long)}
import http from 'node:http'
import fs from 'node:fs'
import path from 'node:path'

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))
const stats = {}
const count = (op) => { stats[op] = (stats[op] || 0) + 1 }

function reply(res, status, obj) {
	const body = JSON.stringify(obj)
	res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
	res.end(body)
}
const fail = (res, status, code, error) => reply(res, status, { error, code, type: 'test', detail: error })

function authorized(req) {
	if (config.api_key && req.headers['x-api-key'] === config.api_key) return true
	if (config.bearer && req.headers.authorization === `Bearer ${config.bearer}`) return true
	return !config.api_key && !config.bearer
}

function vended() {
	const so = { ...(config.storage || {}) }
	const c = config.credentials
	if (c) {
		so.aws_access_key_id = c.aws_access_key_id
		so.aws_secret_access_key = c.aws_secret_access_key
		if (c.aws_session_token) so.aws_session_token = c.aws_session_token
		if (c.expires_in_ms !== undefined) so.expires_at_millis = String(Date.now() + c.expires_in_ms)
	}
	return so
}

const parent = (id) => (id.includes('$') ? id.slice(0, id.lastIndexOf('$')) : '')
const nsExists = (id) => id === '' || (config.namespaces || []).includes(id)

// where a table's manifest for a version goes (V2 naming, as the engine writes them)
function manifestPath(location, version) {
	const dir = location.replace(/^file:\/\//, '')
	const name = (18446744073709551615n - BigInt(version)).toString().padStart(20, '0')
	return path.join(dir, '_versions', `${name}.manifest`)
}

async function body(req) {
	const chunks = []
	for await (const c of req) chunks.push(c)
	const text = Buffer.concat(chunks).toString('utf8')
	return text ? JSON.parse(text) : {}
}

const server = http.createServer(async (req, res) => {
	try {
		const url = new URL(req.url, 'http://127.0.0.1')
		if (url.pathname === '/__test/config' && req.method === 'POST') {
			Object.assign(config, await body(req))
			return reply(res, 200, {})
		}
		if (url.pathname === '/__test/stats') return reply(res, 200, stats)
		if (config.delay_ms) await new Promise((r) => setTimeout(r, config.delay_ms))
		if (!authorized(req)) {
			count('unauthorized')
			return fail(res, 401, 16, 'missing or wrong credentials for this namespace')
		}
		const m = url.pathname.match(/^\/v1\/(namespace|table)\/([^/]+)\/(.+)$/)
		if (!m) return fail(res, 404, 13, `no route ${req.method} ${url.pathname}`)
		const [, kind, rawId, op] = m
		let id = decodeURIComponent(rawId)
		if (id === '$') id = ''
		const route = `${req.method} ${kind}/${op}`
		count(route)
		const args = req.method === 'POST' ? await body(req) : {}
		if (route === 'GET namespace/table/list') {
			if (!nsExists(id)) return fail(res, 404, 1, `namespace ${id} not found`)
			const names = Object.keys(config.tables).filter((t) => parent(t) === id)
				.map((t) => t.slice(t.lastIndexOf('$') + 1)).sort()
			const size = Math.min(Number(url.searchParams.get('limit') || 1000), config.page_size || 1000)
			const start = url.searchParams.get('page_token') ? names.indexOf(url.searchParams.get('page_token')) : 0
			const page = names.slice(start, start + size)
			const out = { tables: page }
			if (start + size < names.length) out.page_token = names[start + size]
			return reply(res, 200, out)
		}
		if (route === 'POST namespace/exists')
			return nsExists(id) ? reply(res, 200, {}) : fail(res, 404, 1, `namespace ${id} not found`)
		const t = config.tables[id]
		if (kind === 'table' && !nsExists(parent(id))) return fail(res, 404, 1, `namespace ${parent(id)} not found`)
		if (route === 'POST table/declare') {
			if (t) return fail(res, 409, 5, `table ${id} exists`)
			if (!config.declare_root) return fail(res, 400, 13, 'this test namespace declares no tables')
			const location = `${config.declare_root}/${id.slice(id.lastIndexOf('$') + 1)}.lance`
			config.tables[id] = { location }
			return reply(res, 200, { location, storage_options: vended() })
		}
		if (kind === 'table' && !t) return fail(res, 404, 4, `table ${id} not found`)
		if (route === 'POST table/exists') return reply(res, 200, {})
		if (route === 'POST table/deregister') {
			delete config.tables[id]
			return reply(res, 200, { location: t.location })
		}
		if (route === 'POST table/describe') {
			const out = { location: t.location, storage_options: vended() }
			if (t.managed_versioning) out.managed_versioning = true
			return reply(res, 200, out)
		}
		if (route === 'POST table/version/create') {
			if (config.refuse_commits) return fail(res, 409, 14, 'commits to this table are refused by the namespace')
			const final = manifestPath(t.location, args.version)
			const staged = String(args.manifest_path).replace(/^file:\/\//, '')
			try {
				fs.linkSync(staged, final)	// put-if-absent, as a commit must be
			} catch (e) {
				if (e.code === 'EEXIST') return fail(res, 409, 12, `version ${args.version} of ${id} exists`)
				throw e
			}
			fs.unlinkSync(staged)
			return reply(res, 200, { version: { version: args.version, manifest_path: final } })
		}
		return fail(res, 404, 13, `operation ${route} is not served by this test namespace`)
	} catch (e) {
		fail(res, 500, 18, String(e && e.message))
	}
})

server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })))
const stop = () => server.close(() => process.exit(0))
process.stdin.on('end', stop)
process.stdin.on('close', stop)
process.stdin.resume()
