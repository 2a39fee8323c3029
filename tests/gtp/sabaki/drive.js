'use strict'
// Drives `jaxgo gtp` the way Sabaki does, with Sabaki's own GTP library (@sabaki/gtp, package.json here):
//   start-up   name, version, protocol_version, list_commands sent at once (Sabaki's EngineSyncer on 'started');
//   a game     synced through ControllerStateTracker.sync (komi, boardsize, clear_board, play ...), then
//              genmove, an illegal move, undo, and a position change synced by undo + play;
//   analysis   the first of analyze / kata-analyze / lz-analyze that list_commands shows, sent as
//              `<colour> <interval>`, stopped as Sabaki stops it (sendAbort: protocol_version while busy);
//              kata-analyze and the colour-less `lz-analyze <interval>` too; every info line is read with the
//              rules of Sabaki's releases (winrate with a '.' = a probability, without = x10000);
//   the end    Controller.stop (quit, stdin left open), then the exit status.
// Usage: node drive.js ENGINE [ARGS...]   -> prints one JSON object {checks: {name: true | "why not"}, ...}.

const {Controller, ControllerStateTracker} = require('@sabaki/gtp')

const ANALYSIS_TIMEOUT = 300000

// Sabaki's analysis-line rule (src/modules/enginesyncer.js of its releases, re-written): segments after
// "info", the PV is the run of vertices at the end, key/value pairs before it, winrate read by its '.'.
function parseAnalysis(line) {
  return line
    .split(/\s*info\s+/)
    .slice(1)
    .map(x => x.trim())
    .map(x => {
      let pv = x.match(/(pass|[A-Za-z]\d+)(\s+(pass|[A-Za-z]\d+))*$/)
      if (pv == null) return null
      let tokens = x.slice(0, pv.index).trim().split(/\s+/).slice(0, -1)
      let fields = {}
      for (let i = 0; i + 1 < tokens.length; i += 2) fields[tokens[i]] = tokens[i + 1]
      return fields
    })
    .filter(x => x != null && x.move != null && /^[A-Za-z]\d+$/.test(x.move) && x.winrate != null)
    .map(({move, visits, winrate}) => ({
      move,
      visits: +visits,
      raw: winrate,
      winrate: winrate.includes('.') ? +winrate * 100 : +winrate / 100
    }))
}

function sleep(ms) {
  return new Promise(resolve => setTimeout(resolve, ms))
}

async function waitFor(condition, timeout) {
  let start = Date.now()
  while (!condition()) {
    if (Date.now() - start > timeout) return false
    await sleep(50)
  }
  return true
}

async function analyse(controller, tracker, name, args, minLines) {
  let lines = []
  let response = tracker.queueCommand({name, args}, ({line}) => {
    if (line.startsWith('info ')) lines.push(line)
  })
  let streamed = await waitFor(() => lines.length >= minLines, ANALYSIS_TIMEOUT)
  if (controller.busy) await controller.sendCommand({name: 'protocol_version'}) // Sabaki's sendAbort
  let result = await response
  return {streamed, lines, result}
}

async function main() {
  let [command, ...args] = process.argv.slice(2)
  let controller = new Controller(command, args)
  let tracker = new ControllerStateTracker(controller)
  let checks = {}
  let check = (name, ok, detail) => {
    checks[name] = ok ? true : String(detail === undefined ? 'failed' : detail)
  }
  let stderr = []
  controller.on('stderr', ({content}) => stderr.push(content))

  controller.start()
  let exit = new Promise(resolve => controller.process.once('exit', (code, signal) => resolve({code, signal})))

  let [name, version, protocol, list] = await Promise.all([
    controller.sendCommand({name: 'name'}),
    controller.sendCommand({name: 'version'}),
    controller.sendCommand({name: 'protocol_version'}),
    controller.sendCommand({name: 'list_commands'})
  ])
  check('name', !name.error && name.content === 'jaxgo', name.content)
  check('version', !version.error && /^\d+\.\d+/.test(version.content), version.content)
  check('protocol_version', protocol.content === '2', protocol.content)
  let commands = list.content.split('\n')
  let analyzeCommand = ['analyze', 'kata-analyze', 'lz-analyze'].find(x => commands.includes(x))
  check('analyze command chosen', analyzeCommand === 'analyze', analyzeCommand)
  check('undo known', await tracker.knowsCommand('undo'))

  let history = [{name: 'play', args: ['B', 'E5']}, {name: 'play', args: ['W', 'C3']}]
  await tracker.sync({komi: 6.5, boardsize: [9, 9], history})
  check('synced', tracker.state.history.length === 2 && tracker.state.komi === 6.5, JSON.stringify(tracker.state))

  let genmove = await tracker.queueCommand({name: 'genmove', args: ['B']})
  check('genmove', !genmove.error && /^([A-HJ][1-9]|pass|resign)$/i.test(genmove.content), genmove.content)
  let illegal = await tracker.queueCommand({name: 'play', args: ['W', 'E5']})
  check('illegal move', illegal.error && illegal.content === 'illegal move', illegal.content)
  let undo = await tracker.queueCommand({name: 'undo'})
  check('undo', !undo.error && tracker.state.history.length === 2, undo.content)
  await tracker.sync({komi: 6.5, boardsize: [9, 9], history: [history[0], {name: 'play', args: ['W', 'D4']}]})
  let stones = await tracker.queueCommand({name: 'list_stones', args: ['white']})
  check('resynced by undo and play', stones.content === 'D4', stones.content)

  for (let [label, name, args, format] of [
    ['analyze', analyzeCommand, ['B', '20'], 'integer'],
    ['kata-analyze', 'kata-analyze', ['B', '20'], 'float'],
    ['lz-analyze without colour', 'lz-analyze', ['20'], 'integer']
  ]) {
    let {streamed, lines, result} = await analyse(controller, tracker, name, args, 2)
    check(`${label}: streamed`, streamed && lines.length >= 2, `${lines.length} lines`)
    check(`${label}: ended cleanly`, !result.error, result.content)
    let variations = lines.map(parseAnalysis)
    let all = [].concat(...variations)
    check(`${label}: every line parsed`, variations.every(v => v.length > 0), lines[0])
    check(
      `${label}: win rates in [0, 100]`,
      all.length > 0 && all.every(v => v.winrate >= 0 && v.winrate <= 100 && Number.isInteger(v.visits)),
      JSON.stringify(all.slice(0, 3))
    )
    check(
      `${label}: ${format} win rates`,
      all.every(v => (format === 'float') === v.raw.includes('.')),
      JSON.stringify(all.map(v => v.raw).slice(0, 10))
    )
  }
  let after = await tracker.queueCommand({name: 'name'})
  check('responses stay in step after analysis', after.content === 'jaxgo', after.content)

  await controller.stop(60000) // quit; Sabaki leaves stdin open and waits for the process to end
  let {code, signal} = await exit
  check('exit status 0', code === 0 && signal == null, `code ${code} signal ${signal}`)
  check(
    'no fatal error on stderr',
    !stderr.some(line => /Fatal Python error|terminate called|Traceback/.test(line)),
    stderr.filter(line => /Fatal|terminate|Traceback|Error/.test(line)).join(' | ')
  )
  console.log(JSON.stringify({checks}))
}

main().catch(err => {
  console.log(JSON.stringify({checks: {driver: String(err && err.stack ? err.stack : err)}}))
  process.exit(1)
})
