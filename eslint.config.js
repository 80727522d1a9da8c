'use strict'

const neostandard = require('neostandard')

module.exports = [
  ...neostandard({ ignores: ['node_modules/**', 'coverage/**', 'build/**', 'prebuilds/**'] }),
  {
    rules: {
      'n/prefer-node-protocol': 'error'
    }
  },
  {
    files: ['src/**/*.js'],
    ignores: ['src/cli/**'],
    rules: {
      'no-console': 'error'
    }
  }
]
