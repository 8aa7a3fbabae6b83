// test/interop/namespace/engine.mjs — the Lance 12 engine (@lancedb/lancedb 0.39.0) on a directory namespace.
//
//   node engine.mjs make ROOT                 the test namespace (below)
//   node engine.mjs list ROOT PROPS NS        the engine's table names of namespace NS ("." = root; "a$b"), sorted
//   node engine.mjs scan ROOT PROPS ID        the rows of table ID ("a$b$t"), one "id|name|amount" line each, by id
//   node engine.mjs append ROOT PROPS ID N    N rows appended by the engine (ids 1000..)
//   node engine.mjs create ROOT PROPS ID N    table ID created by the engine with N rows (ids 1..)
//   node engine.mjs make-s3 URI ENDPOINT      tables orders (6 rows) and events (3) under URI (s3://bucket/prefix) on the
//                                            test S3 server at ENDPOINT (its keys S3RVER / S3RVER)
//   node engine.mjs rest-scan URI HEADERS ID  the rows of table ID read through the REST namespace at URI
//   node engine.mjs rest-list URI HEADERS NS  the table names the engine lists through the REST namespace
// PROPS is a JSON object of the namespace's properties (dir_listing_enabled, ...); "{}" for Lance's defaults.
// An engine error is printed as "ERROR <message>" on stdout (exit 0), so that scripts compare it.
//
// The namespace `make` writes (both forms, as Lance 12 writes them):
//   top.lance, events.lance      root tables of the directory listing (V1, a plain connection)
//   gone.lance                   a root table marked .lance-deregistered (by hand, as the spec's marker file)
//   sales, sales$eu              child namespaces (__manifest, V2)
//   sales$orders, sales$eu$orders, sales$eu$customers   tables in them (hash-named directories)
//   mtop                         a root table only __manifest lists (created with dir_listing_enabled false)
import { createRequire } from 'module';
import { writeFileSync } from 'fs';
import path from 'path';
import { fileURLToPath } from 'url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../lance12/package.json'));
const lancedb = require('@lancedb/lancedb');
const arrow = require('apache-arrow');

const schema = new arrow.Schema([
	new arrow.Field('id', new arrow.Int64(), false),
	new arrow.Field('name', new arrow.Utf8(), true),
	new arrow.Field('amount', new arrow.Float64(), true),
]);

function rows(first, n, tag) {
	const out = [];
	for (let i = 0; i < n; i++)
		out.push({ id: BigInt(first + i), name: `${tag}-${first + i}`, amount: (first + i) * 1.5 });
	return out;
}

function split(id) {
	const parts = id === '.' ? [] : id.split('$');
	return parts;
}

async function ns(root, props) {
	return lancedb.connectNamespace('dir', { root, extraProperties: props });
}

async function table(db, id) {
	const parts = split(id);
	return db.openTable(parts[parts.length - 1], parts.slice(0, -1));
}

function show(r) {
	return `${r.id}|${r.name ?? ''}|${r.amount ?? ''}`;
}

const [cmd, root, a, b, c] = process.argv.slice(2);
try {
	if (cmd === 'make') {
		const plain = await lancedb.connect(root);
		await plain.createTable('top', rows(1, 5, 'top'), { schema });
		await plain.createTable('events', rows(1, 3, 'ev'), { schema });
		await plain.createTable('gone', rows(1, 2, 'gone'), { schema });
		writeFileSync(path.join(root, 'gone.lance', '.lance-deregistered'), '');
		const db = await ns(root, {});
		await db.createNamespace(['sales']);
		await db.createNamespace(['sales', 'eu']);
		await db.createTable('orders', rows(1, 4, 'so'), ['sales'], { schema });
		await db.createTable('orders', rows(1, 6, 'eu'), ['sales', 'eu'], { schema });
		await db.createTable('customers', rows(1, 2, 'cu'), ['sales', 'eu'], { schema });
		const v2 = await ns(root, { dir_listing_enabled: 'false' });
		await v2.createTable('mtop', rows(1, 7, 'mt'), { schema });
	} else if (cmd === 'make-s3') {
		const db = await lancedb.connect(root, { storageOptions: {
			aws_endpoint: a, aws_access_key_id: 'S3RVER', aws_secret_access_key: 'S3RVER', aws_region: 'us-east-1',
			allow_http: 'true' } });
		await db.createTable('orders', rows(1, 6, 'rest'), { schema });
		await db.createTable('events', rows(1, 3, 'rev'), { schema });
	} else if (cmd === 'rest-scan' || cmd === 'rest-list') {
		const db = await lancedb.connectNamespace('rest', { uri: root, headers: JSON.parse(a) });
		if (cmd === 'rest-list') {
			console.log([...(await db.tableNames(split(b)))].sort().join(','));
		} else {
			const t = await table(db, b);
			const all = await t.query().toArray();
			all.sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
			for (const r of all) console.log(show(r));
		}
	} else if (cmd === 'list') {
		const names = await (await ns(root, JSON.parse(a))).tableNames(split(b));
		console.log([...names].sort().join(','));
	} else if (cmd === 'scan') {
		const t = await table(await ns(root, JSON.parse(a)), b);
		const all = await t.query().toArray();
		all.sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
		for (const r of all) console.log(show(r));
	} else if (cmd === 'create') {
		const parts = split(b);
		await (await ns(root, JSON.parse(a))).createTable(parts[parts.length - 1], rows(1, Number(c), 'engine'),
			parts.slice(0, -1), { schema });
	} else if (cmd === 'append') {
		const t = await table(await ns(root, JSON.parse(a)), b);
		await t.add(rows(1000, Number(c), 'engine'));
	} else {
		console.error('usage: engine.mjs make|list|scan|append ROOT ...');
		process.exit(2);
	}
} catch (e) {
	console.log(`ERROR ${String(e.message).split('\n')[0]}`);
}
