/**
 * Projection of the market's per-node cost to a large network (issue 15 item 6; docs/scale.md
 * explains the model): messages, bytes and CPU per node per second at N providers and J jobs/s,
 * from the model (job shards, bids to the renter alone, gossipsub mesh degree D) and the
 * per-message costs a network benchmark MEASURED (bench-results/network.json or a
 * network-scale run). `node dist/test/bench/projection.js [result.json]` prints it.
 */
import { readFile } from 'node:fs/promises'
import { JOB_SHARD_TOPICS, MAX_PROVIDER_SHARDS } from '../../protocols/ids.js'

export interface ScaleModel {
  providers: number
  jobsPerS: number
  /** job shard topics (jobs assumed spread evenly over them) */
  shards: number
  /** gossipsub mesh degree: copies of each message a mesh member receives at most */
  meshDegree: number
  /** bids a job draws (a renter's inbound bid streams per job) */
  bidsPerJob: number
  /** heartbeat interval, s (heartbeats go to connected peers on /idlegrid/heartbeat/1.0.0: item 3) */
  heartbeatSeconds: number
  /**
   * distinct connected peers of a node: the 24 its connector dials plus those that dial it
   * (maxConnections bounds it: 200 by default)
   */
  peersPerNode: number
  /** a bootstrap's connected peers (its sample config allows 2000) */
  peersPerBootstrap: number
}

export const DEFAULT_MODEL: ScaleModel = {
  providers: 10_000,
  jobsPerS: 100,
  shards: JOB_SHARD_TOPICS.length,
  meshDegree: 6,
  bidsPerJob: 20,
  heartbeatSeconds: 30,
  peersPerNode: 50,
  peersPerBootstrap: 2000
}

/** The per-message costs a network benchmark measured, per provider. */
export interface MeasuredCosts {
  /**
   * CPU, read and written bytes per job request a provider hears, above its idle rate (duplicates
   * and forwarding included; clamped at 0)
   */
  jobCpuMs: number
  jobReadBytes: number
  jobWrittenBytes: number
  /** extra per bid (an auction the provider bids on above idle, minus the job request's own cost) */
  bidCpuMs: number
  bidBytes: number
  /** idle provider: CPU per s (timers, pings, heartbeats of the bench's network size) */
  idleCpuMsPerS: number
  /** providers the measurement ran with */
  measuredProviders: number
}

export function measuredCosts (figures: Record<string, any>): MeasuredCosts {
  const jobCpuMs = Math.max(0, Number(figures.perProviderPerJobCpuMsAboveIdle))
  const jobReadBytes = Math.max(0, Number(figures.perProviderPerJobReadBytesAboveIdle))
  return {
    jobCpuMs,
    jobReadBytes,
    jobWrittenBytes: Math.max(0, Number(figures.perProviderPerJobWrittenBytesAboveIdle)),
    bidCpuMs: Math.max(0, Number(figures.perProviderPerAuctionCpuMsAboveIdle) - jobCpuMs),
    bidBytes: Math.max(0, Number(figures.perProviderPerAuctionReadBytesAboveIdle) - jobReadBytes),
    idleCpuMsPerS: Number(figures.perProviderIdleCpuMsPerS),
    measuredProviders: Number(figures.providers)
  }
}

export interface NodeLoad {
  node: string
  jobsHeardPerS: number
  messagesPerS: number
  readKiBPerS: number
  writtenKiBPerS: number
  cpuMsPerS: number
  cpuShare: string
}

/**
 * Per node per second, for: a provider on MAX_PROVIDER_SHARDS shards (a large GPU), one on 6
 * (24 GB class), a relay on every shard (a bootstrap), and a renter publishing 1 job/s; the
 * market path, then heartbeats on top (connected peers / interval messages/s: flat in N).
 */
export function project (
  costs: MeasuredCosts,
  model: ScaleModel = DEFAULT_MODEL
): { market: NodeLoad[], heartbeatsPerNode: HeartbeatLoad, heartbeatsPerBootstrap: HeartbeatLoad } {
  const node = (
    name: string,
    shardsJoined: number,
    bidsPerS: number,
    extra: { messages: number, bytes: number, cpuMs: number } = { messages: 0, bytes: 0, cpuMs: 0 }
  ): NodeLoad => {
    const heard = model.jobsPerS * shardsJoined / model.shards
    const cpu = costs.idleCpuMsPerS + heard * costs.jobCpuMs + bidsPerS * costs.bidCpuMs + extra.cpuMs
    return {
      node: name,
      jobsHeardPerS: round(heard),
      // one validated message per job heard (its up to D-1 duplicates are dropped by id before
      // validation), one stream per bid
      messagesPerS: round(heard + bidsPerS + extra.messages),
      readKiBPerS: round((heard * costs.jobReadBytes + bidsPerS * costs.bidBytes + extra.bytes) / 1024),
      writtenKiBPerS: round((heard * costs.jobWrittenBytes) / 1024),
      cpuMsPerS: round(cpu),
      cpuShare: `${(cpu / 10).toFixed(1)} % of a core`
    }
  }
  const bids = (k: number): number =>
    ((model.jobsPerS * k) / model.shards) * Math.min(1, model.bidsPerJob / ((model.providers * k) / model.shards))
  const market = [
    node(`provider on ${MAX_PROVIDER_SHARDS} shards (80 GB GPU)`, MAX_PROVIDER_SHARDS, bids(MAX_PROVIDER_SHARDS)),
    node('provider on 6 shards (24 GB GPU)', 6, bids(6)),
    node(`relay on all ${model.shards} shards (bootstrap)`, model.shards, 0),
    // a renter joins no shard: it publishes (one message to its fanout peers) and takes its bids
    node('renter publishing 1 job/s', 0, 0, { messages: 1 + model.bidsPerJob, bytes: model.bidsPerJob * costs.bidBytes, cpuMs: model.bidsPerJob * costs.bidCpuMs })
  ]
  // one signed message each, like a job request (smaller, no duplicates): priced at a job request's measured cost
  const heartbeats = (peers: number): HeartbeatLoad => {
    const perS = Math.min(peers, model.providers) / model.heartbeatSeconds
    return {
      messagesPerS: round(perS),
      cpuMsPerS: round(perS * costs.jobCpuMs),
      readKiBPerS: round((perS * costs.jobReadBytes) / 1024)
    }
  }
  return {
    market,
    heartbeatsPerNode: heartbeats(model.peersPerNode),
    heartbeatsPerBootstrap: heartbeats(model.peersPerBootstrap)
  }
}

export interface HeartbeatLoad { messagesPerS: number, cpuMsPerS: number, readKiBPerS: number }

const round = (x: number): number => Number(x.toFixed(2))

export function printProjection (costs: MeasuredCosts, model: ScaleModel = DEFAULT_MODEL): string {
  const { market, heartbeatsPerNode, heartbeatsPerBootstrap } = project(costs, model)
  const lines = [
    `projection to ${model.providers} providers at ${model.jobsPerS} jobs/s (${model.shards} job shards, mesh degree ${model.meshDegree}, ${model.bidsPerJob} bids a job)`,
    `measured at ${costs.measuredProviders} providers, per job request heard: ${costs.jobCpuMs.toFixed(3)} ms CPU, ${Math.round(costs.jobReadBytes)} B read, ${Math.round(costs.jobWrittenBytes)} B written; per bid: ${costs.bidCpuMs.toFixed(3)} ms CPU, ${Math.round(costs.bidBytes)} B`,
    '| node | jobs heard/s | messages/s | read KiB/s | written KiB/s | CPU ms/s |',
    '| --- | --- | --- | --- | --- | --- |',
    ...market.map(n => `| ${n.node} | ${n.jobsHeardPerS} | ${n.messagesPerS} | ${n.readKiBPerS} | ${n.writtenKiBPerS} | ${n.cpuMsPerS} (${n.cpuShare}) |`),
    `CPU includes the measured idle rate (${costs.idleCpuMsPerS.toFixed(1)} ms/s: timers, pings, the bench's own heartbeats)`,
    `plus heartbeats from connected peers (issue 15 item 3; no global topic): ${heartbeatsPerNode.messagesPerS} messages/s on a node with ${model.peersPerNode} peers (~${heartbeatsPerNode.cpuMsPerS} ms CPU/s), ${heartbeatsPerBootstrap.messagesPerS} on a bootstrap with ${model.peersPerBootstrap} (~${heartbeatsPerBootstrap.cpuMsPerS} ms CPU/s), at a job request's measured cost; the global topic would be ${round(model.providers / model.heartbeatSeconds)} on every node`,
    ...(costs.jobCpuMs === 0 ? ['note: the job requests\' CPU above idle measured ≤ 0 (noise: a loaded machine); take the figures again on a quiet one'] : [])
  ]
  return lines.join('\n')
}

if (process.argv[1]?.endsWith('projection.js') === true) {
  const file = process.argv[2] ?? 'bench-results/network.json'
  const result = JSON.parse(await readFile(file, 'utf8'))
  const figures = result.figures?.largest ?? result.figures
  process.stdout.write(printProjection(measuredCosts(figures)) + '\n')
}
