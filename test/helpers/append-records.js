'use strict'
// Self-checking records for the append stress tests (test/file-authority/append.test.js,
// test/stress/append.stress.js), the same format as the C core's test
// (test/file-authority/native/append_test.c): "AOSR", the writer's id, the record's
// sequence number and the payload length (each 4 bytes, little endian), then the
// payload, each byte a function of writer, sequence and position. Text records (for
// appendText) are all ASCII: "AOST", the three numbers as 8 decimal digits each, and a
// printable payload. A record torn apart or interleaved with another's bytes fails its
// payload check.
//
// As a program (`node append-records.js ROOT NAME ID COUNT MAX FORM`): appends COUNT
// records of 1 ... MAX random payload bytes to [NAME] under the write authority of
// ROOT, each with appendBytesSync (FORM 'sync'), appendBytes (FORM 'async'),
// alternately appendBytes / appendTextSync of a text record (FORM 'mixed'), or, not
// through this package at all, with fs.appendFileSync (FORM 'foreign': a writer that
// takes no part in anything the package does), with durable: false; in worker threads too when
// WORKERS is set (each its own id); `COUNT` 0 appends forever (the kill test), and
// `SAME` makes every record's payload the sequence-0 one so the time goes into writing.

const HEADER = 16
const TEXT_HEADER = 28
const MAGIC = Buffer.from('AOSR')
const TEXT_MAGIC = Buffer.from('AOST')

function payloadByte (id, seq, k, text) {
  const x = (Math.imul(id, 2654435761) ^ Math.imul(seq, 40503) ^ Math.imul(k, 2246822519)) >>> 0
  const b = ((x >>> 13) ^ x) & 0xff
  return text ? 0x20 + (b % 95) : b // text records: printable ASCII
}

const digits8 = (n) => String(n).padStart(8, '0')

function makeRecord (id, seq, len, text = false) {
  if (text) {
    const buf = Buffer.allocUnsafe(TEXT_HEADER + len)
    buf.write(`AOST${digits8(id)}${digits8(seq)}${digits8(len)}`, 0, 'latin1')
    for (let k = 0; k < len; k++) buf[TEXT_HEADER + k] = payloadByte(id, seq, k, true)
    return buf
  }
  const buf = Buffer.allocUnsafe(HEADER + len)
  MAGIC.copy(buf, 0)
  buf.writeUInt32LE(id, 4)
  buf.writeUInt32LE(seq, 8)
  buf.writeUInt32LE(len, 12)
  for (let k = 0; k < len; k++) buf[HEADER + k] = payloadByte(id, seq, k, false)
  return buf
}

/** The length of the whole record at data[off...], or 0; sets out.id / out.seq.
 * `sameSeq`: payloads were made with sequence number 0 (the writer's SAME mode). */
function recordAt (data, off, out, sameSeq) {
  let id, seq, len, hdr
  const text = data.length - off >= TEXT_HEADER && data.compare(TEXT_MAGIC, 0, 4, off, off + 4) === 0
  if (text) {
    const h = data.toString('latin1', off + 4, off + TEXT_HEADER)
    if (!/^\d{24}$/.test(h)) return 0
    id = Number(h.slice(0, 8))
    seq = Number(h.slice(8, 16))
    len = Number(h.slice(16))
    hdr = TEXT_HEADER
  } else {
    if (data.length - off < HEADER || data.compare(MAGIC, 0, 4, off, off + 4) !== 0) return 0
    id = data.readUInt32LE(off + 4)
    seq = data.readUInt32LE(off + 8)
    len = data.readUInt32LE(off + 12)
    hdr = HEADER
  }
  if (data.length - off - hdr < len) return 0
  const s = sameSeq ? 0 : seq
  for (let k = 0; k < len; k++) if (data[off + hdr + k] !== payloadByte(id, s, k, text)) return 0
  out.id = id
  out.seq = seq
  return hdr + len
}

/** Parses a file of records: { whole, torn, seen: Map<id, count per seq> }. */
function parse (data, ids, count) {
  const seen = new Map(ids.map((id) => [id, new Uint8Array(count)]))
  let whole = 0
  let torn = 0
  let off = 0
  const r = {}
  while (off < data.length) {
    const n = recordAt(data, off, r)
    if (n === 0 || !seen.has(r.id) || r.seq >= count) {
      torn++
      off++
      while (off < data.length && recordAt(data, off, r) === 0) off++
      continue
    }
    whole++
    const s = seen.get(r.id)
    if (s[r.seq] < 255) s[r.seq]++
    off += n
  }
  let lost = 0
  let duplicated = 0
  for (const s of seen.values()) {
    for (const c of s) {
      if (c === 0) lost++
      if (c > 1) duplicated += c - 1
    }
  }
  return { whole, torn, lost, duplicated }
}

// ---- running writers (the tests' side)

/** Runs this file as a writer process: resolves when it exits 0. */
function runWriter (args, env = {}) {
  const { spawn } = require('node:child_process')
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [__filename, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] })
    let err = ''
    child.stderr.on('data', (d) => { err += d })
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer exit ${code}: ${err}`))))
  })
}

/** The append stress: `writers` ([id, form, env?]; a writer with env.WORKERS = k also
 * runs ids id+1 ... id+k in worker threads) each append `n` records of 1 ... 64 KiB to
 * `dir`/log. Returns the parse of the file with the count expected, bytes and time. */
async function stress (dir, writers, n) {
  const fs = require('node:fs')
  const path = require('node:path')
  const started = Date.now()
  await Promise.all(writers.map(([id, form, env]) => runWriter([dir, 'log', String(id), String(n), '65536', form], env)))
  const data = fs.readFileSync(path.join(dir, 'log'))
  const ids = writers.flatMap(([id, , env]) => Array.from({ length: 1 + Number((env && env.WORKERS) || 0) }, (_, i) => id + i))
  const got = parse(data, ids, n)
  return { ...got, records: ids.length * n, bytes: data.length, ms: Date.now() - started }
}

/** `kills` rounds: a writer appending records of up to 4 MiB (sync and async in turn)
 * killed with SIGKILL at a random instant; each file must hold whole records, then at
 * most a prefix of the next one. Returns { whole, tails, bad }. */
async function killRounds (dir, kills) {
  // Under wine node starts slowly and writes slowly: smaller records, so that a round
  // does not write gigabytes before its kill.
  const max = process.env.AGENT_OS_WINE === '1' ? 256 << 10 : 4 << 20
  const fs = require('node:fs')
  const path = require('node:path')
  const { spawn } = require('node:child_process')
  let whole = 0
  let tails = 0
  let bad = 0
  for (let round = 0; round < kills; round++) {
    const name = `k${round}`
    const child = spawn(process.execPath, [__filename, dir, name, '1', '0', String(max), round % 2 ? 'sync' : 'async'],
      { env: { ...process.env, SAME: '1' }, stdio: 'ignore' })
    // The kill lands at a random moment once the appender has begun (its file has
    // bytes): Node's start takes from 50 ms to seconds (wine, a sanitizer build, a
    // loaded machine), so it is waited for, up to 20 s, not guessed.
    const exited = new Promise((resolve) => child.on('exit', resolve))
    const begun = path.join(dir, name)
    for (let waited = 0; waited < 20000; waited += 10) {
      let size = 0
      try { size = fs.statSync(begun).size } catch {}
      if (size > 0 || child.exitCode !== null) break
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 200)))
    child.kill('SIGKILL')
    await exited
    const file = path.join(dir, name)
    const data = fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0)
    fs.rmSync(file, { force: true })
    let off = 0
    let expect = 0
    const r = {}
    while (off < data.length) {
      const n = recordAt(data, off, r, true)
      if (n > 0 && r.id === 1 && r.seq === expect) {
        whole++
        expect++
        off += n
        continue
      }
      // The rest must be a prefix of record `expect`: its header so far, then payload.
      const rest = data.subarray(off)
      const full = makeRecord(1, expect, 0)
      const hdr = Math.min(rest.length, 12)
      let ok = rest.subarray(0, hdr).equals(full.subarray(0, hdr))
      if (ok && rest.length >= HEADER) {
        const len = rest.readUInt32LE(12)
        ok = rest.length - HEADER < len
        for (let k = 0; ok && k < rest.length - HEADER; k++) ok = rest[HEADER + k] === payloadByte(1, 0, k, false)
      }
      if (ok) tails++
      else bad++
      break
    }
  }
  return { whole, tails, bad }
}

module.exports = { HEADER, makeRecord, recordAt, parse, payloadByte, stress, killRounds }

function xorshift (seed) {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    return x
  }
}

async function writer (root, name, id, count, max, form) {
  const fa = require('../../lib/file-authority.js')
  const w = fa.openWriteAuthoritySync(root)
  const next = xorshift(id * 7919 + process.pid)
  const same = process.env.SAME === '1'
  const template = same ? makeRecord(id, 0, max) : undefined
  for (let seq = 0; count === 0 || seq < count; seq++) {
    const len = 1 + (next() % max)
    const text = form === 'mixed' && seq % 2 === 1
    let rec
    if (same) {
      rec = template.subarray(0, HEADER + len)
      rec.writeUInt32LE(seq, 8)
      rec.writeUInt32LE(len, 12)
    } else {
      rec = makeRecord(id, seq, len, text)
    }
    if (form === 'foreign') {
      require('node:fs').appendFileSync(require('node:path').join(root, name), rec)
    } else if (form === 'sync' || (form === 'mixed' && text)) {
      if (text) w.appendTextSync([name], rec.toString('latin1'), { durable: false }) // all ASCII
      else w.appendBytesSync([name], rec, { durable: false })
    } else {
      await w.appendBytes([name], rec, { durable: false })
    }
  }
  w.closeSync()
}

if (require.main === module) {
  const [root, name, id, count, max, form] = process.argv.slice(2)
  const { Worker, isMainThread, workerData } = require('node:worker_threads')
  if (!isMainThread) {
    writer(...workerData).catch((err) => { console.error(err); process.exit(1) })
  } else {
    const workers = Number(process.env.WORKERS || 0)
    const jobs = [writer(root, name, Number(id), Number(count), Number(max), form)]
    for (let i = 1; i <= workers; i++) {
      const data = [root, name, Number(id) + i, Number(count), Number(max), form]
      jobs.push(new Promise((resolve, reject) => {
        const wk = new Worker(__filename, { workerData: data })
        wk.on('error', reject)
        wk.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`worker exit ${code}`))))
      }))
    }
    Promise.all(jobs).catch((err) => { console.error(err); process.exit(1) })
  }
}
