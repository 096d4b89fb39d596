/**
 * A Markdown document's code blocks, run as written: {@link codeBlocks} reads the fenced blocks (with
 * their info string, e.g. `sh e2e`), and a {@link DocShell} runs them one after the other in one bash
 * session, as a reader's terminal would: variables, `export`s and background jobs carry from one block
 * to the next. `set -euo pipefail`: any failing command fails its block (and ends the session).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CodeBlock {
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string after the fence (`sh e2e`). */
  info: string;
  text: string;
}

/** The fenced code blocks of a Markdown text, in order (indented ones, in list items, lose their indentation). */
export function codeBlocks(markdown: string): CodeBlock[] {
  const out: CodeBlock[] = [];
  let open: { indent: number; fence: string; info: string; line: number; body: string[] } | undefined;
  markdown.split('\n').forEach((l, i) => {
    if (!open) {
      const m = /^( *)(`{3,}|~{3,})(.*)$/.exec(l);
      if (m) open = { indent: m[1]!.length, fence: m[2]!, info: m[3]!.trim(), line: i + 1, body: [] };
      return;
    }
    if (new RegExp(`^ *${open.fence[0]}{${open.fence.length},}\\s*$`).test(l)) {
      out.push({ line: open.line, info: open.info, text: open.body.join('\n') });
      open = undefined;
      return;
    }
    open.body.push(l.slice(Math.min(open.indent, l.length - l.trimStart().length)));
  });
  return out;
}

export interface BlockRun {
  stdout: string;
  stderr: string;
}

/** A long output's start and end (a failed command's first error, and how it ended). */
const excerpt = (s: string) => (s.length > 4000 ? `${s.slice(0, 2000)}\n…\n${s.slice(-2000)}` : s);

export class DocShell {
  private readonly bash: ChildProcessWithoutNullStreams;
  private readonly dir = mkdtempSync(join(tmpdir(), 'latchkey-doc-'));
  private stdout = '';
  private stderr = '';
  private exit: string | undefined;
  private onChange: () => void = () => undefined;

  /** `env`: the whole environment of the session (what the reader's terminal has). */
  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    // Its own process group, so close() also ends background jobs the blocks started.
    this.bash = spawn('bash', ['--norc', '--noprofile'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.bash.stdout.on('data', (d: Buffer) => {
      this.stdout += d.toString();
      this.onChange();
    });
    this.bash.stderr.on('data', (d: Buffer) => {
      this.stderr += d.toString();
      this.onChange();
    });
    this.bash.on('exit', (code, signal) => {
      this.exit = signal ? `killed by ${signal}` : `exited ${code}`;
      this.onChange();
    });
    this.bash.stdin.write('set -euo pipefail\n');
  }

  /** Runs one block (from a file, stdin /dev/null: its commands cannot read the next ones); throws with its output if it failed. */
  run(block: CodeBlock, timeoutMs: number): Promise<BlockRun> {
    const file = join(this.dir, `block-${block.line}.sh`);
    writeFileSync(file, `${block.text}\n`);
    const done = `__doc_block_${block.line}_done__`;
    this.stdout = '';
    this.stderr = '';
    return new Promise((resolve, reject) => {
      const fail = (why: string) =>
        reject(
          new Error(
            `the block at line ${block.line} ${why}\n--- stdout ---\n${excerpt(this.stdout)}\n--- stderr ---\n${excerpt(this.stderr)}`,
          ),
        );
      const timer = setTimeout(() => {
        this.onChange = () => undefined;
        this.close();
        fail(`did not finish within ${timeoutMs} ms`);
      }, timeoutMs);
      this.onChange = () => {
        const at = this.stdout.indexOf(`\n${done}\n`);
        if (at >= 0) {
          clearTimeout(timer);
          this.onChange = () => undefined;
          resolve({ stdout: this.stdout.slice(0, at), stderr: this.stderr });
        } else if (this.exit) {
          clearTimeout(timer);
          this.onChange = () => undefined;
          fail(`failed: the shell ${this.exit}`);
        }
      };
      if (this.exit) return this.onChange();
      this.bash.stdin.write(`source ${file} </dev/null\nprintf '\\n%s\\n' ${done}\n`);
    });
  }

  close(): void {
    if (!this.exit && this.bash.pid) {
      try {
        process.kill(-this.bash.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
