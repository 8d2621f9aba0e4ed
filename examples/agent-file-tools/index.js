'use strict'
// node examples/agent-file-tools: the tools at work in a temporary workspace.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { openFileTools } = require('./agent-file-tools.js')

async function main () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-file-tools-'))
  try {
    fs.mkdirSync(path.join(dir, 'src'))
    fs.mkdirSync(path.join(dir, 'node_modules', 'dep'), { recursive: true })
    fs.writeFileSync(path.join(dir, 'src', 'app.js'), 'const greeting = "héllo"\n')
    fs.writeFileSync(path.join(dir, 'node_modules', 'dep', 'index.js'), 'module.exports = 1\n')
    const tools = await openFileTools(dir)
    await tools.create('notes/todo.md', '- rename greeting\n')
    console.log('glob **/*.js (node_modules not entered):', (await tools.glob('**/*.js')).paths)
    console.log('list src with sizes:', await tools.list('src'))
    console.log('read 20 bytes, cut at a character:', await tools.read(path.join(dir, 'src', 'app.js'), { length: 20 }).then((r) => [r.text, r.end]))
    await tools.edit('src/app.js', '"héllo"', '"hi"')
    console.log('after edit:', (await tools.readText('src/app.js')).trim())
    await tools.move('notes/todo.md', 'notes/done.md')
    console.log('deleted:', await tools.delete('notes/done.md'))
    await tools.readText('/etc/passwd').catch((err) => console.log('outside the workspace:', err.code))
    console.log('session log:', (await tools.history()).map((e) => `${e.tool} ${e.outcome}`).join(', '))
    await tools.close()
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((err) => { console.error(err); process.exitCode = 1 })
