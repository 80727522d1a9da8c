'use strict'

const neostandard = require('neostandard')
const globals = require('globals')

module.exports = [
  ...neostandard({ ignores: ['node_modules/**', 'coverage/**', 'build/**', 'prebuilds/**'] }),
  {
    rules: {
      'n/prefer-node-protocol': 'error'
    }
  },
  {
    files: ['bin/httpsys'],
    languageOptions: { sourceType: 'commonjs' }
  },
  {
    files: ['test/**/*.js'],
    languageOptions: { globals: { ...globals.jest } }
  },
  {
    files: ['src/**/*.js'],
    ignores: ['src/cli/**'],
    rules: {
      'no-console': 'error'
    }
  }
]
