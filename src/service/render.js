'use strict'

// Fills a file of templates/ with values: `{{key}}` is replaced by the value of key, and
// a line naming a key whose value is null or undefined is left out (an optional
// setting). Values arrive already escaped for the file's syntax.

const fs = require('node:fs')
const path = require('node:path')

const TEMPLATES = path.join(__dirname, '..', '..', 'templates')

/**
 * @param {string} template the text, or a file name under templates/
 * @param {object} values
 * @returns {string}
 */
function render (template, values) {
  const text = template.includes('\n') ? template : read(template)
  const out = []
  for (const line of text.split('\n')) {
    const keys = [...line.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1])
    for (const key of keys) {
      if (!(key in values)) throw new Error(`template ${template.includes('\n') ? '' : template + ' '}names {{${key}}}, which has no value`)
    }
    if (keys.some((key) => values[key] === null || values[key] === undefined)) continue
    out.push(line.replace(/\{\{(\w+)\}\}/g, (_, key) => String(values[key])))
  }
  return out.join('\n')
}

/** A file of templates/: from the single executable's assets when it runs as one (it has no templates/ folder). */
function read (name) {
  const carried = require('../sea').asset(`templates/${name}`)
  return carried !== null ? carried.toString('utf8') : fs.readFileSync(path.join(TEMPLATES, name), 'utf8')
}

module.exports = { render }
