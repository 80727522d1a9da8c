'use strict'

// Small text helpers shared by the commands that print for a person.

const { formatSize } = require('../config/size')

/** 93784000 -> "1d 2h"; 0 -> "-" */
function formatUptime (ms) {
  if (!(ms > 0)) return '-'
  const s = Math.floor(ms / 1000)
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m ${s % 60}s`
  const h = Math.floor(m / 60)
  if (h < 24) return `${h}h ${m % 60}m`
  return `${Math.floor(h / 24)}d ${h % 24}h`
}

/** Left-aligned columns; the first row is the header. */
function table (rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)))
  return rows.map((r) => r.map((cell, i) => String(cell).padEnd(widths[i])).join('  ').trimEnd()).join('\n')
}

module.exports = { formatUptime, formatSize, table }
