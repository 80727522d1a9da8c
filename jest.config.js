'use strict'

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.js'],
  testPathIgnorePatterns: ['/node_modules/', '/test/windows/'],
  // integration tests spawn real processes and sockets on 2 shared cores
  testTimeout: 30000,
  maxWorkers: 2
}
