/**
 * A reader that goes away (`gpuplan targets | head -1`: EPIPE) ends the printing quietly and
 * nothing else: the command finishes as if everything had been printed, with the same exit code,
 * and a run goes on — its steps, journal and events never depend on someone watching. Node
 * ignores SIGPIPE, so the loss shows up as an error on the stream (and on each write's callback),
 * which would otherwise crash the process or reject a view's flush. Any other failure to print
 * (a full disk behind `> plan.json`) must not pass silently: it is reported on exit.
 *
 * Whole texts (a command's result, its summary line) are written straight to the file
 * descriptor with write(2), without ever creating Node's stream: process.stdout loads node:stream
 * and, for a pipe, node:net — ~3.5 ms of a 60 ms compile or dry run (issue #17). Once a stream
 * has been handed out (a run's view writes through one), every later text goes through it, so
 * that nothing overtakes what the stream still holds; a descriptor that would block (EAGAIN, a
 * non-blocking pipe someone gave us) hands the rest to the stream the same way.
 * The guard goes on a stream when gpuplan first asks for it.
 */
import { writeSync } from "node:fs";
import { EXIT } from "../problems/exit-codes.js";
import { stdoutFailureText } from "../problems/stdout-failure.js";
import type { StreamSink } from "../run/record/stream-target.js";
import { onTerminalDevice } from "./terminal-device.js";

type Write = NodeJS.WriteStream["write"];
type WriteCallback = (error?: Error | null) => void;

// ECONNRESET: a socket's reader that left with bytes unread (a Node parent's "pipe" stdio, which
// is a socketpair; systemd) — the same leaving as a pipe's EPIPE, which depends on when it left.
const READER_GONE = new Set(["EPIPE", "ECONNRESET", "ERR_STREAM_DESTROYED"]);
// A terminal that hung up (its ssh session or window gone) answers writes with EIO. On stderr, whose
// chatter was for the person who left, that is a reader gone as a pipe's; on stdout it stays a
// failure (exit 2): what a command produced there is lost. On a file EIO is a failing disk.
const TERMINAL_GONE = "EIO";

/** What is known of one of the two outputs, shared by its direct writes and its stream. */
interface Channel {
  readonly fd: 1 | 2;
  readonly name: "stdout" | "stderr";
  /** The guarded stream, once handed out: from then on every text goes through it. */
  stream: NodeJS.WriteStream | undefined;
  /** The reader went away or writing failed: later texts are dropped. */
  lost: boolean;
  /** The first failure that is not the reader leaving, reported on exit. */
  failure: Error | undefined;
}

const channels = {
  stdout: { fd: 1, name: "stdout", stream: undefined, lost: false, failure: undefined } as Channel,
  stderr: { fd: 2, name: "stderr", stream: undefined, lost: false, failure: undefined } as Channel,
};

/** process.stdout, guarded. */
export function stdout(): NodeJS.WriteStream {
  return streamOf(channels.stdout);
}

/** process.stderr, guarded. */
export function stderr(): NodeJS.WriteStream {
  return streamOf(channels.stderr);
}

/** Print a whole text on stdout (see the head of this file for how). */
export function printOut(text: string): void {
  print(channels.stdout, text);
}

/** Print a whole text on stderr. */
export function printErr(text: string): void {
  print(channels.stderr, text);
}

/**
 * stdout or stderr as a run's events stream (`--ui json`, `--events /dev/stdout`): through the
 * guarded stream, in order with everything else printed there; `done` says when the stream has
 * taken the bytes, and says EPIPE when the reader has gone (the guard itself keeps that quiet).
 */
export function sinkOf(name: "stdout" | "stderr"): StreamSink {
  const channel = channels[name];
  const gone = () => Object.assign(new Error(`write EPIPE (${name})`), { code: "EPIPE" });
  return {
    write(bytes, done) {
      if (channel.lost) {
        process.nextTick(done, channel.failure ?? gone());
        return;
      }
      streamOf(channel).write(bytes, (e) => done(e ?? (channel.lost ? (channel.failure ?? gone()) : null)));
    },
  };
}

function print(channel: Channel, text: string): void {
  if (channel.stream) {
    channel.stream.write(text);
    return;
  }
  if (channel.lost || text === "") return;
  const bytes = Buffer.from(text, "utf8");
  let done = 0;
  while (done < bytes.length) {
    try {
      done += writeSync(channel.fd, bytes, done, bytes.length - done);
    } catch (e) {
      const code = codeOf(e);
      if (code === "EINTR") continue;
      if (code === "EAGAIN") {
        streamOf(channel).write(bytes.subarray(done));
        return;
      }
      fail(channel, e);
      return;
    }
  }
}

function codeOf(e: unknown): string | undefined {
  const code = typeof e === "object" && e !== null && "code" in e ? e.code : undefined;
  return typeof code === "string" ? code : undefined;
}

function isReaderGone(e: unknown, channel: Channel): boolean {
  const code = codeOf(e);
  return (
    code !== undefined &&
    (READER_GONE.has(code) ||
      (code === TERMINAL_GONE && channel.name === "stderr" && onTerminalDevice(channel.fd)))
  );
}

/** Writing failed: drop what follows, and report on exit unless the reader simply left. */
function fail(channel: Channel, e: unknown): void {
  channel.lost = true;
  if (isReaderGone(e, channel) || channel.failure) return;
  channel.failure = e instanceof Error ? e : new Error(String(e));
  process.once("exit", () => {
    const failure = channel.failure;
    if (!failure) return;
    // Said on stderr only (stdout is what failed), with a hint for the common codes; a failing
    // stderr has nowhere to be told.
    if (channel.name === "stdout") printErr(stdoutFailureText(codeOf(failure)));
    // A lost output is gpuplan failing its job (file-system-error, exit 2), which outranks problems
    // in the input (exit 1) as a run's records-incomplete does; a signal's or --no-wait's status stays.
    const exit = process.exitCode;
    if (!exit || exit === EXIT.problems) process.exitCode = EXIT.usage;
  });
}

function streamOf(channel: Channel): NodeJS.WriteStream {
  channel.stream ??= guard(channel.name === "stdout" ? process.stdout : process.stderr, channel);
  return channel.stream;
}

function guard(stream: NodeJS.WriteStream, channel: Channel): NodeJS.WriteStream {
  stream.on("error", (e: Error) => fail(channel, e));
  const write = stream.write.bind(stream) as (
    chunk: unknown,
    encoding?: BufferEncoding,
    callback?: WriteCallback,
  ) => boolean;
  const guarded = (chunk: unknown, encoding?: BufferEncoding | WriteCallback, callback?: WriteCallback) => {
    const cb = typeof encoding === "function" ? encoding : callback;
    const enc = typeof encoding === "function" ? undefined : encoding;
    if (channel.lost) {
      if (cb) process.nextTick(cb, null);
      return true;
    }
    return write(chunk, enc, (e) => {
      if (e && isReaderGone(e, channel)) channel.lost = true;
      cb?.(e && !isReaderGone(e, channel) ? e : null);
    });
  };
  stream.write = guarded as Write;
  return stream;
}
