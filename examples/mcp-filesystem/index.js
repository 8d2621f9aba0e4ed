#!/usr/bin/env node
'use strict'
// node examples/mcp-filesystem <allowed-directory> [more...]: the filesystem MCP server
// on standard input and output, with upstream's command line (mcp-server-filesystem).
// Limits come from the environment: MCP_FILESYSTEM_MAX_BYTES (largest file read whole,
// default 32 MiB), MCP_FILESYSTEM_MAX_ENTRIES (largest directory_tree / search_files
// walk, default 200 000), MCP_FILESYSTEM_DURABLE=1 (flush writes to disk).

const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js')
const { FilesystemServer, limitsFromEnv } = require('./server.js')

async function main (argv) {
  if (argv.length === 0) {
    console.error('Usage: node examples/mcp-filesystem [allowed-directory] [additional-directories...]')
    console.error('Allowed directories come from the command line, or from the client through the MCP roots protocol')
    console.error('(the client\'s roots replace the command line\'s); at least one of the two must give one.')
  }
  const server = new FilesystemServer({ directories: argv, limits: limitsFromEnv() })
  if (!(await server.open())) {
    console.error('Error: None of the specified directories are accessible')
    process.exit(1)
  }
  const transport = new StdioServerTransport()
  await server.mcp.connect(transport)
  console.error('Secure MCP Filesystem Server (agent-os) running on stdio')
  if (server.allowed.size === 0) console.error('Started without allowed directories - waiting for the client to give roots')
  const stop = () => { server.close().finally(() => process.exit(0)) }
  process.stdin.on('close', stop)
  process.on('SIGTERM', stop)
}

main(process.argv.slice(2)).catch((err) => {
  console.error('Fatal error running server:', err)
  process.exit(1)
})
