// Lists the classes of src/ longer than a limit (default 300 lines), longest first; exits 1 when any is (npm run lint).
import ts from 'typescript';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const limit = Number(process.argv[2] ?? 300);
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) files.push(path);
  }
};
walk('src');
const found = [];
for (const file of files) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ file, name: node.name?.text ?? '(anonymous)', lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
const over = found.filter((c) => c.lines > limit).sort((a, b) => b.lines - a.lines);
for (const c of over) console.log(`${c.lines}\t${c.name}\t${c.file}`);
process.exit(over.length ? 1 : 0);
