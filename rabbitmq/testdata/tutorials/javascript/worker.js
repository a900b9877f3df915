#!/usr/bin/env node
// RabbitMQ tutorial 2, "Work Queues" (JavaScript, amqplib): worker.js as the tutorial gives it
// (rabbitmq-tutorials javascript-nodejs/src/worker.js at commit 8aec600, Apache License 2.0; see README.md).
// Only this comment is added; the test replaces the broker's address.

const amqp = require('amqplib');

async function main() {
    const connection = await amqp.connect('amqp://localhost');
    const channel = await connection.createChannel();

    const queue = 'task_queue';

    await channel.assertQueue(queue, {
        durable: true,
        arguments: { 'x-queue-type': 'quorum' }
    });
    channel.prefetch(1);
    console.log(" [*] Waiting for messages in %s. To exit press CTRL+C", queue);
    channel.consume(queue, function(msg) {
        const secs = msg.content.toString().split('.').length - 1;

        console.log(" [x] Received %s", msg.content.toString());
        setTimeout(function() {
            console.log(" [x] Done");
            channel.ack(msg);
        }, secs * 1000);
    }, {
        // manual acknowledgment mode,
        // see /docs/confirms for details
        noAck: false
    });
}

main();
