// receive.js of Microsoft's quickstart "Send messages to and receive
// messages from Azure Service Bus queues (JavaScript)" (@azure/service-bus,
// the connection-string variant), as the tutorial gives it: it subscribes,
// lets the SDK complete each message after the handler, and closes after
// 20 s. The Go test replaces only the two placeholders.
const { delay, ServiceBusClient, ServiceBusMessage } = require("@azure/service-bus");

// connection string to your Service Bus namespace
const connectionString = "<CONNECTION STRING TO SERVICE BUS NAMESPACE>"

// name of the queue
const queueName = "<QUEUE NAME>"

 async function main() {
	// create a Service Bus client using the connection string to the Service Bus namespace
	const sbClient = new ServiceBusClient(connectionString);

	// createReceiver() can also be used to create a receiver for a subscription.
	const receiver = sbClient.createReceiver(queueName);

	// function to handle messages
	const myMessageHandler = async (messageReceived) => {
		console.log(`Received message: ${messageReceived.body}`);
	};

	// function to handle any errors
	const myErrorHandler = async (error) => {
		console.log(error);
	};

	// subscribe and specify the message and error handlers
	receiver.subscribe({
		processMessage: myMessageHandler,
		processError: myErrorHandler
	});

	// Waiting long enough before closing the sender to send messages
	await delay(20000);

	await receiver.close();
	await sbClient.close();
}
// call the main function
main().catch((err) => {
	console.log("Error occurred: ", err);
	process.exit(1);
 });
