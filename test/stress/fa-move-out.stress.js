'use strict'
// The move-out races of test/file-authority/move-out.test.js at stress size: 2000 rounds
// per operation and resolver and 400 000 reads against the C mover (CI size: 400 and
// 80 000; npm test runs 200 and 40 000).
const { size } = require('./helpers.js')

process.env.AGENT_OS_MOVE_ROUNDS = process.env.AGENT_OS_MOVE_ROUNDS || String(size(2000, 400))
process.env.AGENT_OS_MOVE_READS = process.env.AGENT_OS_MOVE_READS || String(size(400000, 80000))
require('../file-authority/move-out.test.js')
