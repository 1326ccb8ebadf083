// The editor side of the `switchboard acp` tests: the official ACP SDK's client app drives a
// `switchboard acp` child through the steps of a plan and reports what it saw as one JSON object on stdout.
// The C++ test (tests/e2e/AcpScenarios.cpp) writes the plan, checks the report and validates every message the
// agent sent against the ACP JSON Schema. This script asserts nothing itself, so a test cannot pass because
// it skipped a check.
//
//   node acp_editor.mjs PLAN.json
// PLAN: {"command": [binary, args...], "env": {...}, "steps": [...], "permission": "allow"|"always"|"reject"|"wait"}
// Steps: {"do":"initialize"} {"do":"new","cwd":...,"mcpServers"?:[...]} {"do":"set_mode","mode":...} {"do":"list","cwd"?:...}
//        {"do":"load","sessionId":...|"last"} {"do":"prompt","text":...,"cancelOnChunk"?:bool,"blocks"?:[...]}
//        {"do":"until_chunk","text":...} (waits for another client's turn to say it)
//        {"do":"resume","sessionId":...} {"do":"prompts","texts":[...]} (sent at once) {"do":"close_session"}
//        {"do":"set_config_option","configId":...,"value":...|"pick":"other"} ("other": the last choice that is
//        not the current value, in the newest config options the agent gave) {"do":"close"} (ends our side: stdin
//        closed, then the child's exit is awaited)
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const report = { steps: [], updates: [], permissions: [], sent: [], received: [], exit: null, error: null };
const methodsById = new Map(); // our request ids → method, to know what each response of the agent answers

const child = spawn(plan.command[0], plan.command.slice(1), {
  env: { ...process.env, ...plan.env },
  stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve(signal ? `signal ${signal}` : code)));

// Both directions are tapped line by line, so the report has every message exactly as it was on the wire.
function tapLines(onLine) {
  let buffer = "";
  return (chunk) => {
    buffer += chunk.toString("utf8");
    let at;
    while ((at = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      if (line.trim() !== "") onLine(line);
    }
  };
}
const fromAgent = tapLines((line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    report.sent.push({ line, invalidJson: true });
    return;
  }
  const entry = { message };
  if (message.id !== undefined && message.method === undefined) entry.answers = methodsById.get(JSON.stringify(message.id)) ?? null;
  report.sent.push(entry);
});
const toAgent = tapLines((line) => {
  const message = JSON.parse(line);
  if (message.method !== undefined && message.id !== undefined) methodsById.set(JSON.stringify(message.id), message.method);
  report.received.push(message);
});

const input = new ReadableStream({
  start(controller) {
    // The SDK may cancel its reader first (the connection closed): later bytes are still recorded.
    let open = true;
    child.stdout.on("data", (chunk) => {
      fromAgent(chunk);
      if (open) {
        try {
          controller.enqueue(new Uint8Array(chunk));
        } catch {
          open = false;
        }
      }
    });
    child.stdout.on("end", () => {
      if (open) {
        open = false;
        try {
          controller.close();
        } catch {}
      }
    });
  },
  cancel() {},
});
const stdinWeb = Writable.toWeb(child.stdin);
const writer = stdinWeb.getWriter();
const output = new WritableStream({
  async write(chunk) {
    toAgent(Buffer.from(chunk));
    await writer.write(chunk);
  },
  async close() {
    await writer.close();
  },
});

let onChunk = null; // the running prompt's hook, for cancelOnChunk
let configOptions = []; // the newest the agent gave (session/new, load, resume, an update, set_config_option)
const app = acp
  .client({ name: "switchboard-acp-test" })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
    const seen = { params, outcome: null };
    report.permissions.push(seen);
    if (plan.markFile) writeFileSync(plan.markFile, "asked\n");
    const pick = (kind) => params.options.find((option) => option.kind === kind)?.optionId;
    if (plan.permission === "wait") {
      // Someone else answers (another client of the daemon): the agent must withdraw the request.
      await new Promise((resolve) => {
        if (signal.aborted) return resolve();
        signal.addEventListener("abort", resolve);
        setTimeout(resolve, 90000);
      });
      seen.outcome = signal.aborted ? "withdrawn" : "timeout";
      return { outcome: { outcome: "cancelled" } };
    }
    const kind = { allow: "allow_once", always: "allow_always", reject: "reject_once" }[plan.permission ?? "allow"];
    seen.outcome = kind;
    return { outcome: { outcome: "selected", optionId: pick(kind) } };
  })
  .onNotification(acp.methods.client.session.update, async ({ params }) => {
    report.updates.push(params);
    if (params.update.sessionUpdate === "config_option_update") configOptions = params.update.configOptions;
    if (onChunk && params.update.sessionUpdate === "agent_message_chunk") onChunk(params);
  });

const connection = app.connect(acp.ndJsonStream(output, input));
const agent = connection.agent;
let sessionId = null;

async function runStep(step) {
  switch (step.do) {
    case "initialize":
      return agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: "switchboard-acp-test", version: "1" },
      });
    case "new": {
      const result = await agent.request(acp.methods.agent.session.new, { cwd: step.cwd, mcpServers: step.mcpServers ?? [] });
      sessionId = result.sessionId;
      configOptions = result.configOptions ?? [];
      return result;
    }
    case "set_mode":
      return agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: step.mode });
    case "set_config_option": {
      let value = step.value;
      if (step.pick === "other") {
        const option = configOptions.find((o) => o.id === step.configId);
        const others = (option?.options ?? []).filter((choice) => choice.value !== option.currentValue);
        if (others.length === 0) throw new Error(`no other choice for ${step.configId} in ${JSON.stringify(configOptions)}`);
        value = others[others.length - 1].value;
      }
      const result = await agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: step.configId, value });
      configOptions = result.configOptions;
      return { result, value };
    }
    case "list":
      return agent.request(acp.methods.agent.session.list, step.cwd ? { cwd: step.cwd } : {});
    case "load": {
      const id = step.sessionId;
      const before = report.updates.length;
      const result = await agent.request(acp.methods.agent.session.load, { sessionId: id, cwd: step.cwd, mcpServers: [] });
      sessionId = id;
      return { result, replayed: report.updates.slice(before) };
    }
    case "resume": {
      const before = report.updates.length;
      const result = await agent.request(acp.methods.agent.session.resume, { sessionId: step.sessionId, cwd: step.cwd });
      sessionId = step.sessionId;
      return { result, replayed: report.updates.slice(before) };
    }
    case "until_chunk": {
      // Waits for the agent to say `text` (in a turn this editor did not start), at most timeoutMs.
      const deadline = Date.now() + (step.timeoutMs ?? 60000);
      while (!report.updates.some((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content?.text?.includes(step.text))) {
        if (Date.now() > deadline) throw new Error(`no chunk with ${step.text}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return {};
    }
    case "close_session":
      return agent.request(acp.methods.agent.session.close, { sessionId });
    case "prompts": {
      // Sent at once, without waiting: the later ones queue behind the first.
      const results = await Promise.all(
        step.texts.map((text) => agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })),
      );
      return { results };
    }
    case "prompt": {
      const blocks = step.blocks ?? [{ type: "text", text: step.text }];
      let cancelled = false;
      if (step.cancelOnChunk) {
        onChunk = () => {
          if (cancelled) return;
          cancelled = true;
          void agent.notify(acp.methods.agent.session.cancel, { sessionId });
        };
      }
      const before = report.updates.length;
      try {
        const result = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: blocks });
        return { result, cancelSent: cancelled, updates: report.updates.slice(before) };
      } finally {
        onChunk = null;
      }
    }
    case "close":
      await output.close().catch(() => {});
      report.exit = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve("still running"), 30000))]);
      return { exit: report.exit };
    default:
      throw new Error(`unknown step ${step.do}`);
  }
}

try {
  for (const step of plan.steps) {
    try {
      report.steps.push({ do: step.do, ok: true, value: await runStep(step) });
      process.stderr.write(`acp_editor: ${step.do} done\n`);
    } catch (error) {
      report.steps.push({ do: step.do, ok: false, error: { message: String(error?.message ?? error), code: error?.code ?? null, data: error?.data ?? null } });
      if (!step.mayFail) break;
    }
  }
} catch (error) {
  report.error = String(error?.stack ?? error);
}
report.sessionId = sessionId;
if (report.exit === null) {
  child.kill("SIGTERM");
  report.exit = await exited;
}
process.stdout.write(JSON.stringify(report) + "\n");
process.exit(0);
