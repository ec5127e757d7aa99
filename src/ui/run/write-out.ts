/** Write and wait until the stream has taken the text, so close() resolves only after the last words. */
export function writeOut(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(text, (error?: Error | null) => (error ? reject(error) : resolve()));
  });
}
