'use strict'

// Which node runs an app's workers (src/sea/worker-node.js) and the `node` config key.
// Outside the single executable nothing changes unless `node` is given; the
// executable's own choices are tested on the built executable (test/exe/).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { resolveNode, workerCommand } = require('../../../src/sea/worker-node')
const { validate } = require('../../../src/config')

const IS_WINDOWS = process.platform === 'win32'

function fakeNode (dir, version) {
  const file = path.join(dir, 'node')
  fs.writeFileSync(file, `#!/bin/sh\necho ${version}\n`, { mode: 0o755 })
  return file
}

describe('the node of an app', () => {
  let dir
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-node-')) })
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

  test('from the source tree, no `node`: this node, with the argv as given', () => {
    const argv = ['--max-old-space-size=64', '--require', '/x/register.js', 'app.js', 'a']
    const cmd = workerCommand({ node_args: ['--max-old-space-size=64'] }, argv, { A: '1' })
    expect(cmd.file).toBe(process.execPath)
    expect(cmd.args).toEqual(argv)
    expect(cmd.env).toEqual({ A: '1' })
  })

  test('node: "self" is the node running httpsys', () => {
    expect(resolveNode('self')).toMatchObject({ path: process.execPath, self: true, version: process.versions.node })
  })

  const posix = IS_WINDOWS ? test.skip : test
  posix('a configured node runs the workers', () => {
    const node = fakeNode(dir, '22.1.0')
    const cmd = workerCommand({ node, node_args: [] }, ['--require', '/x/register.js', 'app.js'], {})
    expect(cmd.file).toBe(node)
    expect(cmd.node).toMatchObject({ self: false, version: '22.1.0' })
  })

  posix('a configured node older than 20 is refused with its version', () => {
    const node = fakeNode(dir, '18.19.0')
    expect(() => resolveNode(node)).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_NODE_UNUSABLE', message: expect.stringMatching(/v18\.19\.0/) }))
  })

  test('a configured node that does not run is refused', () => {
    const node = path.join(dir, 'not-a-binary')
    fs.writeFileSync(node, 'garbage', { mode: 0o644 })
    expect(() => resolveNode(node)).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_NODE_UNUSABLE' }))
  })

  test('the `node` key: a path relative to the config, "self", or a missing file named', () => {
    const script = path.join(dir, 'app.js')
    fs.writeFileSync(script, '')
    fs.writeFileSync(path.join(dir, 'mynode'), '')
    const ok = validate({ apps: [{ script: 'app.js', node: './mynode' }, { script: 'app.js', name: 'b', node: 'self' }] }, { baseDir: dir })
    expect(ok.apps.map((a) => a.node)).toEqual([path.join(dir, 'mynode'), 'self'])
    expect(() => validate({ apps: [{ script: 'app.js', node: './nope' }] }, { baseDir: dir }))
      .toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_CONFIG_INVALID', message: expect.stringMatching(/node.*nope.*is not a file/s) }))
    // pm2's `interpreter` (src/config/pm2-keys.js): node is what runs apps anyway;
    // another program is refused
    expect(validate({ apps: [{ script: 'app.js', interpreter: 'node' }] }, { baseDir: dir }).apps[0].node)
      .toBe(validate({ apps: [{ script: 'app.js' }] }, { baseDir: dir }).apps[0].node)
    expect(() => validate({ apps: [{ script: 'app.js', interpreter: 'python3' }] }, { baseDir: dir }))
      .toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_CONFIG_INVALID', message: expect.stringMatching(/node apps only/) }))
  })
})
