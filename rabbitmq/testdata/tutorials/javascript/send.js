#!/usr/bin/env node
// RabbitMQ tutorial 1, "Hello World!" (JavaScript, amqplib): send.js as the tutorial gives it
// (rabbitmq-tutorials javascript-nodejs/src/send.js at commit 8aec600, Apache License 2.0; see README.md).
// Only this comment is added; the test replaces the broker's address.

const amqp = require('amqplib');

async function main() {
    const connection = await amqp.connect('amqp://localhost');
    const channel = await connection.createChannel();

    const queue = 'hello';
    const msg = 'Hello World!';

    await channel.assertQueue(queue, {
        durable: true,
        arguments: { 'x-queue-type': 'quorum' }
    });
    channel.sendToQueue(queue, Buffer.from(msg));

    console.log(" [x] Sent %s", msg);

    setTimeout(function() {
        connection.close();
        process.exit(0);
    }, 500);
}

main();
