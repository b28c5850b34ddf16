// A node:test reporter that keeps only the run's closing counts (tests, pass,
// fail, …) as JSON lines. scripts/test.mjs runs the suite in two phases and adds
// the phases' counts into one closing summary, so CI still reads one total.
export default async function* totals(source) {
  for await (const event of source) {
    if (event.type !== 'test:diagnostic' || event.data.nesting !== 0) continue;
    const match = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ([\d.]+)$/.exec(event.data.message);
    if (match) yield `${JSON.stringify({ [match[1]]: Number(match[2]) })}\n`;
  }
}
