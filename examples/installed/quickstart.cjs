// npm install ./fabric-core-*.tgz, then: node quickstart.cjs
const { Fabric } = require("fabric-core");

const config = {
  metadata: { name: "hello" },
  harness: { adapter_id: "fabric.scripted", settings: { replies: ["Hello! You said: {input}"] } },
};

new Fabric().run(config, { input: "Hello, Fabric" }).then((result) => {
  console.log(result.status, result.output.response);
});
