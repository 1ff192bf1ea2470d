// The official OpenAI client (npm `openai`, tests/llm/package.json) against tinygrad-llm --serve: the model list, a
// chat completion, the same chat streamed, and a completion, printed as one JSON object for test_llm_server.py.
//   node tests/llm/openai_client.mjs http://127.0.0.1:PORT/v1 MODEL
import OpenAI from "openai";
const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({baseURL, apiKey: "none", maxRetries: 0});
const messages = [{role: "system", content: "Be brief."}, {role: "user", content: "Hello there"}];
const models = await client.models.list();
const chat = await client.chat.completions.create({model, messages, max_tokens: 8, temperature: 0});
const stream = await client.chat.completions.create({model, messages, max_tokens: 8, temperature: 0, stream: true,
                                                     stream_options: {include_usage: true}});
let streamed = "", finish = null, usage = null;
for await (const chunk of stream) {
  if (chunk.usage) usage = chunk.usage;
  for (const c of chunk.choices) {
    streamed += c.delta?.content ?? "";
    if (c.finish_reason) finish = c.finish_reason;
  }
}
const completion = await client.completions.create({model, prompt: "hi", max_tokens: 5, temperature: 0});
let notFound = null;
try {
  await client.chat.completions.create({model: "no-such-model", messages});
} catch (e) {
  notFound = {status: e.status, message: e.message};
}
console.log(JSON.stringify({models: models.data.map((m) => m.id), chat: chat.choices[0].message.content,
                            chat_finish: chat.choices[0].finish_reason, chat_usage: chat.usage, streamed, finish, usage,
                            completion: completion.choices[0].text, notFound}));
