'use strict'
// Every hostile layout of test/helpers/fs-layouts.js against every operation (sync and
// async), on both resolution paths (openat2 and the portable walk).

const assert = require('node:assert')
const fs = require('node:fs')
const path = require('node:path')
const fa = require('../../lib/file-authority.js')
const { LAYOUTS, makeSandbox, resolvers, useResolver, walkTree } = require('../helpers/fs-layouts.js')
const { skipBecause } = require('../helpers/platform.js')

const OPS = {
  read: {
    sync: (r, w, segs) => r.readBytesSync(segs, { maxBytes: 1 << 20 }),
    async: (r, w, segs) => r.readBytes(segs, { maxBytes: 1 << 20 })
  },
  list: {
    sync: (r, w, segs) => r.listSync(segs),
    async: (r, w, segs) => r.list(segs)
  },
  write: {
    sync: (r, w, segs) => w.writeTextSync(segs, 'written'),
    async: (r, w, segs) => w.writeText(segs, 'written')
  },
  writeCreate: {
    sync: (r, w, segs) => w.writeTextSync(segs, 'written', { createParents: true }),
    async: (r, w, segs) => w.writeText(segs, 'written', { createParents: true })
  }
}

function assertOutsideIntact (s) {
  assert.deepStrictEqual(fs.readdirSync(s.outside), ['secret'])
  assert.strictEqual(fs.readFileSync(path.join(s.outside, 'secret'), 'utf8'), 'OUTSIDE')
}

function assertNoTemp (s) {
  const temps = walkTree(s.root).filter((p) => /\.aos-[0-9a-f]{32}\.tmp$/.test(p))
  assert.deepStrictEqual(temps, [])
}

for (const resolver of resolvers()) {
  describe(`file-authority hostile layouts (${resolver} resolver)`, function () {
    for (const layout of LAYOUTS) {
      describe(layout.name, function () {
        let s, reader, writer, skipped
        before(async function () {
          s = makeSandbox()
          // A set-up returns 'skip' when the host refuses it (mknod, mount), or a reason
          // (docs/platforms.md) when the platform cannot make the layout.
          const refused = await layout.setup(s)
          skipped = refused === 'skip' ? 'the host refused the set-up (mknod or mount)' : refused || s.skip
          if (skipped) return
          assert.strictEqual(useResolver(resolver), resolver)
          reader = fa.openReadAuthoritySync(s.root)
          writer = fa.openWriteAuthoritySync(s.root)
        })
        after(async function () {
          if (reader) reader.closeSync()
          if (writer) writer.closeSync()
          if (layout.teardown && !skipped) await layout.teardown(s)
          s.cleanup()
        })

        for (const [opName, forms] of Object.entries(OPS)) {
          const spec = layout[opName]
          for (const [form, run] of Object.entries(forms)) {
            it(`${opName} (${form}): ${spec.code ? `${spec.code} at segment ${spec.segmentIndex}` : 'allowed'}`, async function () {
              if (skipped) skipBecause(this, skipped)
              let result, error
              try {
                result = await run(reader, writer, spec.segments)
              } catch (err) {
                error = err
              }
              if (spec.code) {
                assert.ok(error instanceof fa.FileAuthorityError, `expected ${spec.code}, got ${error || 'a result'}`)
                assert.strictEqual(error.code, spec.code)
                assert.strictEqual(error.segmentIndex, spec.segmentIndex)
                assert.strictEqual(error.operation, opName.startsWith('write') ? 'writeText' : opName === 'read' ? 'readBytes' : 'list')
              } else {
                assert.ifError(error)
                assert.ok(spec.value(result, s), 'unexpected result')
              }
              assertOutsideIntact(s)
              assertNoTemp(s)
              if (layout.after) layout.after(s, assert)
            })
          }
        }
      })
    }
  })
}
