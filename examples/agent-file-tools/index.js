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
    fs.writeFileSync(path.join(dir, 'src', 'app.js'), 'const greeting = "hello"\n')
    const tools = await openFileTools(dir)
    await tools.create('notes/todo.md', '- rename greeting\n')
    console.log('glob **/*.js:', (await tools.glob('**/*.js')).paths)
    console.log('read:', (await tools.read('src/app.js')).text.trim())
    await tools.edit('src/app.js', '"hello"', '"hi"')
    console.log('after edit:', (await tools.read('src/app.js')).text.trim())
    await tools.move('notes/todo.md', 'notes/done.md')
    console.log('deleted:', await tools.delete('notes/done.md'))
    await tools.close()
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((err) => { console.error(err); process.exitCode = 1 })
