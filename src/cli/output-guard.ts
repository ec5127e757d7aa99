/**
 * A reader that goes away (`gpuplan targets | head -1`: EPIPE) ends the printing quietly and
 * nothing else: the command finishes as if everything had been printed, with the same exit code,
 * and a run goes on — its steps, journal and events never depend on someone watching. Node
 * ignores SIGPIPE, so the loss shows up as an error on the stream (and on each write's callback),
 * which would otherwise crash the process or reject a view's flush. Any other failure to print
 * (a full disk behind `> plan.json`) must not pass silently: it is reported on exit.
 * The guard goes on a stream when gpuplan first writes to it: Node creates process.stderr on first
 * use, and for a pipe that costs a few milliseconds that `gpuplan --help` need not pay.
 */

type Write = NodeJS.WriteStream["write"];
type WriteCallback = (error?: Error | null) => void;

const READER_GONE = new Set(["EPIPE", "ERR_STREAM_DESTROYED"]);

const guardedStreams = new WeakSet<NodeJS.WriteStream>();

/** process.stdout, guarded. */
export function stdout(): NodeJS.WriteStream {
  return guardedStreams.has(process.stdout) ? process.stdout : guard(process.stdout, "stdout");
}

/** process.stderr, guarded. */
export function stderr(): NodeJS.WriteStream {
  return guardedStreams.has(process.stderr) ? process.stderr : guard(process.stderr, "stderr");
}

function guard(stream: NodeJS.WriteStream, name: string): NodeJS.WriteStream {
  guardedStreams.add(stream);
  let lost = false;
  let failure: Error | undefined;
  const isReaderGone = (e: unknown): boolean => {
    const code = typeof e === "object" && e !== null && "code" in e ? e.code : undefined;
    return typeof code === "string" && READER_GONE.has(code);
  };
  stream.on("error", (e: Error) => {
    lost = true;
    if (!isReaderGone(e)) failure ??= e;
  });
  const write = stream.write.bind(stream) as (
    chunk: unknown,
    encoding?: BufferEncoding,
    callback?: WriteCallback,
  ) => boolean;
  const guarded = (chunk: unknown, encoding?: BufferEncoding | WriteCallback, callback?: WriteCallback) => {
    const cb = typeof encoding === "function" ? encoding : callback;
    const enc = typeof encoding === "function" ? undefined : encoding;
    if (lost) {
      if (cb) process.nextTick(cb, null);
      return true;
    }
    return write(chunk, enc, (e) => {
      if (e && isReaderGone(e)) lost = true;
      cb?.(e && !isReaderGone(e) ? e : null);
    });
  };
  stream.write = guarded as Write;
  process.once("exit", () => {
    if (!failure) return;
    const errno = "code" in failure ? String(failure.code) : failure.message;
    if (name !== "stderr") {
      process.stderr.write(`gpuplan: error: cannot write to ${name}: ${errno}  [file-system-error]\n`);
    }
    if (!process.exitCode) process.exitCode = 2;
  });
  return stream;
}
