'use strict'
// Prints 1 or 0 for a build switch read by binding.gyp, so the same file serves the
// install build (neither), the test build (werror) and the sanitizer build (sanitize).
const names = { werror: 'AGENT_OS_WERROR', sanitize: 'AGENT_OS_SANITIZE' }
const name = names[process.argv[2]]
process.stdout.write(name && process.env[name] === '1' ? '1' : '0')
