// npm install ./fabric-core-*.tgz, then: node quickstart.mjs
import { Fabric } from "fabric-core";

const config = {
  metadata: { name: "hello" },
  harness: { adapter_id: "fabric.scripted", settings: { replies: ["Hello! You said: {input}"] } },
};

const result = await new Fabric().run(config, { input: "Hello, Fabric" });
console.log(result.status, result.output.response);
