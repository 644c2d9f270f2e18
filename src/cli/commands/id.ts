import { EXIT } from '../errors.js'
import { oneShot } from '../one-shot.js'
import { COMMON_OPTIONS, NODE_OPTIONS } from '../options.js'
import type { NodeIdentity } from '../../node/index.js'
import type { CommandDefinition } from '../command.js'

export const idCommand: CommandDefinition = {
  name: 'id',
  usage: 'idlegrid id [options]',
  options: { ...NODE_OPTIONS, ...COMMON_OPTIONS },
  run: async (values, _, out) => {
    const { via, result } = await oneShot('id', {}, values)
    const id = result as NodeIdentity
    out.data(id)
    out.info(`peer id: ${id.peerId}`)
    for (const addr of id.addrs) out.info(`address: ${addr}`)
    if (via === 'short-lived') out.info('(no node is running on this data directory; these addresses belonged to a short-lived peer)')
    return EXIT.ok
  }
}
