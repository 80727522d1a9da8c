'use strict'

// Small text helpers shared by the commands that print for a person.

const { createColors } = require('colorette')
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

/**
 * A table that fits a terminal `width` columns wide (issue 28: ls and monit were about
 * 150 columns and wrapped at 80), as pm2 does: the full headers when the whole table
 * fits; else the short ones; else, still too wide, the columns with a `drop` rank are
 * left out, the highest rank first, until it fits.
 * @param {Array<{ header: string, short?: string, drop?: number }>} columns
 * @param {Array<Array<*>>} rows the cells, one per column
 * @param {number} [width=Infinity] the terminal's columns (Infinity: a pipe, every column)
 * @returns {{ lines: string[], shown: number[] }} shown: the indices of the columns kept
 */
function fitTable (columns, rows, width = Infinity) {
  let shown = columns.map((_, i) => i)
  const render = (short) => table([shown.map((i) => short ? columns[i].short || columns[i].header : columns[i].header),
    ...rows.map((r) => shown.map((i) => r[i]))]).split('\n')
  const fits = (lines) => lines.every((l) => l.length <= width)
  let lines = render(false)
  if (fits(lines)) return { lines, shown }
  lines = render(true)
  const order = columns.map((c, i) => ({ i, drop: c.drop })).filter((c) => c.drop !== undefined).sort((a, b) => a.drop - b.drop)
  for (const { i } of order) {
    if (fits(lines)) break
    shown = shown.filter((k) => k !== i)
    lines = render(true)
  }
  return { lines, shown }
}

/** 0.42 -> "0.42 ms", 12.5 -> "12.5 ms", 2500 -> "2.5 s"; null -> "-" */
function formatLatency (ms) {
  if (ms === null || ms === undefined) return '-'
  if (ms === Infinity) return '>100 s'
  if (ms >= 1000) return `${Number((ms / 1000).toPrecision(3))} s`
  return `${Number(ms.toPrecision(3))} ms`
}

/** requests per second: "-" when unknown, one decimal below 100 */
function formatRate (r) {
  if (r === null || r === undefined) return '-'
  return r >= 100 ? String(Math.round(r)) : String(Math.round(r * 10) / 10)
}

/** colorette's colours for a stream: on in a terminal, off with NO_COLOR or in a pipe */
function colorsFor (stream) {
  const useColor = process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== '0'
    ? true
    : Boolean(stream && stream.isTTY) && process.env.NO_COLOR === undefined
  return createColors({ useColor })
}

/** green when serving, yellow on the way, red when it needs someone */
function stateColor (colors, state) {
  if (state === 'ready') return colors.green
  if (state === 'errored' || state === 'degraded' || state === 'exited') return colors.red
  if (state === 'stopped' || state === 'idle') return colors.gray
  return colors.yellow
}

module.exports = { formatUptime, formatSize, formatLatency, formatRate, table, fitTable, colorsFor, stateColor }
