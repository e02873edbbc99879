"""Conversations labelled with the problem each message belongs to, for arbitration (D59).

Each conversation is a person working with an assistant: a problem, its follow-ups in the
words people use (few of them repeat the problem's title), a second problem raised in passing,
its follow-ups, and sometimes a return to the first. A label is the problem a message belongs
to: a label not seen before in its conversation is a new problem.

`TUNING` was written first and measured before D59's rules were designed (21 of 62 messages
went to the right problem; its last two conversations were added later, for D59's mention rule
and for D61); `HELD_OUT` was written before those rules were implemented and
was not looked at while tuning them (13 of 44 before, all after).
"""

from __future__ import annotations

Conversation = list[tuple[str, str]]
TUNING: dict[str, Conversation] = {
    "s3 sync tool": [
        ("A", "I'm writing a CLI tool in Python that syncs a folder to S3"),
        ("A", "How should I handle retries when an upload fails?"),
        ("A", "What about large files over 5 GB?"),
        ("A", "Show me the upload function"),
        ("A", "Can it skip files that haven't changed since the last sync?"),
        ("B", "Separately, our staging database ran out of disk space last night"),
        ("B", "How do I find which tables take up the most space?"),
        ("B", "Is it safe to run VACUUM FULL while the app is running?"),
        ("A", "Back to the S3 sync tool: how do I add a dry-run flag?"),
    ],
    "react form": [
        ("A", "My React signup form re-renders on every keystroke and feels sluggish"),
        ("A", "Would useMemo help here?"),
        ("A", "What about moving the state into the input components?"),
        ("A", "How would I still validate the whole form on submit then?"),
        ("B", "Unrelated: how do I rename a git branch?"),
        ("A", "OK, back to the signup form. Should I switch to react-hook-form?"),
        ("A", "Does it work with our Zod schemas?"),
    ],
    "flask api": [
        ("A", "I'm building a Flask API for a todo app"),
        ("A", "Should I use SQLAlchemy or raw sqlite3?"),
        ("A", "Show me the model for a Todo item"),
        ("A", "How do I add a due date column later without losing data?"),
        ("A", "And how do I test the endpoints?"),
        ("B", "Our CI pipeline started failing with a permission denied error on the deploy step"),
        ("B", "Which IAM role does the deploy job use?"),
        ("B", "Could the secret have expired?"),
    ],
    "pandas memory": [
        ("A", "I have a CSV of 2 million sales rows and pandas runs out of memory loading it"),
        ("A", "Would reading it in chunks work?"),
        ("A", "What dtypes should I use for the price and quantity columns?"),
        ("A", "How about using Polars instead?"),
        ("A", "Can you show me the groupby by region in Polars?"),
        ("B", "I also need to write the quarterly report for the board by Friday"),
        ("B", "What sections should it have?"),
        ("A", "Back to the sales data: how do I export the result to Parquet?"),
    ],
    "oomkilled pods": [
        ("A", "Our pods keep getting OOMKilled in the staging cluster"),
        ("A", "How do I see the memory limits currently set?"),
        ("A", "What's a sensible request versus limit for a JVM service?"),
        ("A", "Should I set -Xmx explicitly as well?"),
        ("A", "Why would memory keep growing after the heap is full?"),
        ("B", "Different topic: what's the best way to learn Rust as a Python developer?"),
        ("B", "Which book would you recommend?"),
    ],
    "billing service split": [
        ("A", "Review my plan for splitting the monolith's billing module into a service"),
        ("A", "How should the two talk to each other, REST or a queue?"),
        ("A", "What happens to transactions that span both?"),
        ("A", "Is the outbox pattern overkill here?"),
        ("B", "Quick question, how do I undo the last commit without losing my changes?"),
        ("A", "OK so for the billing service, how do we migrate the data?"),
        ("A", "Could we run both in parallel for a while?"),
    ],
    "cover letter": [
        ("A", "Help me write a cover letter for a backend engineer role at a fintech startup"),
        ("A", "Make the opening paragraph less generic"),
        ("A", "Should I mention my open source work?"),
        ("A", "How long should it be?"),
        ("A", "Now tighten the closing"),
        ("B", "Also, I need to prepare for the system design interview next week"),
        ("B", "What topics come up most often?"),
        ("B", "Walk me through designing a URL shortener"),
    ],
    "timezone test": [
        ("A", "The date parsing test fails on CI but passes locally"),
        ("A", "CI runs in UTC and my laptop is in Berlin, could that be it?"),
        ("A", "How do I make the test independent of the machine's timezone?"),
        ("A", "Should I use freezegun for this?"),
        ("A", "What about the other tests that call datetime.now()?"),
        ("B", "New task: add rate limiting to the public API"),
        ("B", "Which algorithm is simplest, token bucket or fixed window?"),
        ("B", "Where should the counters live if we run four instances?"),
    ],
    # Written after D59's first rules, for the follow-up that names one of two threads.
    "two projects": [
        ("A", "I'm migrating our billing service from MySQL to Postgres"),
        ("A", "What's the safest way to copy the data?"),
        ("B", "Our mobile app crashes on startup for Android 14 users"),
        ("B", "Is it a permissions issue?"),
        ("A", "For the Postgres move, how do we handle the enum columns?"),
        ("A", "And the triggers?"),
        ("B", "Regarding the Android crash, could it be the new splash screen API?"),
    ],
    # Written after D59, with the reports a debugging session is made of (D61).
    "debugging reports": [
        ("A", "Our nginx server returns 502 errors after the deploy"),
        ("A", "What should I check first?"),
        ("A", "I restarted the upstream service but nothing changed"),
        ("A", "The logs say connect() failed (111: Connection refused)"),
        ("A", "It listens on port 8000 and nginx points to 8080"),
        ("A", "That fixed it, thanks!"),
        ("B", "Now I need to set up log rotation for the app logs"),
        ("B", "I tried logrotate but the files are owned by root"),
        ("B", "Here is my config: /var/log/app/*.log { daily rotate 7 }"),
    ],
}

HELD_OUT: dict[str, Conversation] = {
    "terraform state": [
        ("A", "We need to move our Terraform state from local files to an S3 backend"),
        ("A", "Do I need a DynamoDB table for locking?"),
        ("A", "What happens to the existing state when I run terraform init?"),
        ("A", "Give me the backend block"),
        ("A", "How do the other engineers pick up the change?"),
        ("B", "On another note, the nightly ETL job took six hours instead of one"),
        ("B", "Where would you start looking?"),
        ("B", "Could a missing index on the events table explain it?"),
    ],
    "go concurrency": [
        ("A", "I'm getting a data race in my Go worker pool"),
        ("A", "Should I use a mutex or channels for the shared counter?"),
        ("A", "Explain how the race detector finds these"),
        ("A", "Is sync/atomic enough for a simple counter?"),
        ("B", "By the way, how do I pin a Go module to a specific commit?"),
        ("A", "Back to the worker pool: how do I shut it down cleanly?"),
        ("A", "What if a worker is stuck on a slow HTTP call?"),
    ],
    "blog post": [
        ("A", "Help me outline a blog post about our migration from Heroku to Fly.io"),
        ("A", "Who is the audience, developers or managers?"),
        ("A", "Rewrite the intro so it hooks the reader"),
        ("A", "Should we include the cost numbers?"),
        ("A", "What title would you suggest?"),
        ("B", "Our status page is showing the API as degraded and customers are emailing"),
        ("B", "What should the incident update say?"),
    ],
    "sql query": [
        ("A", "This Postgres query that joins orders and customers takes 40 seconds"),
        ("A", "How do I read the EXPLAIN ANALYZE output?"),
        ("A", "Why is it doing a sequential scan?"),
        ("A", "Would a composite index help?"),
        ("A", "Which column should come first in it?"),
        ("B", "Another thing: I have to onboard two new engineers next Monday"),
        ("B", "What should their first week look like?"),
        ("A", "Back to the slow query: should I rewrite the join as a subquery?"),
    ],
    "docker build": [
        ("A", "Our Docker image for the Node service is 1.8 GB"),
        ("A", "Would a multi-stage build help?"),
        ("A", "Show me a Dockerfile with that"),
        ("A", "Is alpine a good base for it?"),
        ("A", "And how do I keep the npm cache between builds?"),
        ("B", "I want to set up Renovate for our repos"),
        ("B", "Can it group minor updates into one PR?"),
    ],
    "ml model": [
        ("A", "My churn prediction model has 95% accuracy but misses most churners"),
        ("A", "Is accuracy the wrong metric here?"),
        ("A", "How should I handle the class imbalance?"),
        ("A", "What about SMOTE?"),
        ("A", "Tell me how to pick the decision threshold"),
        ("B", "Unrelated, but what's a good laptop for data science under 2000 euros?"),
        ("B", "Is 32 GB of RAM enough?"),
    ],
}
