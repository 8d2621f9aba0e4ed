'use strict'
module.exports = async function demo (dir) {
  console.log('not built yet')
}
