"""Writes the python/clock exercise of the sample run (both tries applied and failed):
python3 samples/aider-tries/make_sample.py"""
import json
import os

D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "2025-03-02-09-00-00--sample-sonnet-diff", "python", "exercises", "practice", "clock")
os.makedirs(D, exist_ok=True)
HISTORY = """
# aider chat started at 2025-03-01 10:04:40

> Aider v0.75.2.dev
> Model: anthropic/claude-3-7-sonnet-20250219 with diff edit format
> Git repo: none
> Added clock.py to the chat.

#### # Instructions  
####   
#### Implement a clock that handles times without dates.  
####   
#### Use the above instructions to modify the supplied files: clock.py  
#### Don't change the names of existing functions or classes, as they may be referenced from other code like unit tests, etc.  
#### Only use standard libraries, don't suggest installing any packages.  

I'll keep the minutes in one number and format them on output.

clock.py
<<<<<<< SEARCH
    def __init__(self, hour, minute):
        pass
=======
    def __init__(self, hour, minute):
        self.minutes = (hour * 60 + minute) % 1440
>>>>>>> REPLACE

> Applied edit to clock.py  
```
F.F...
FAILED clock_test.py::ClockTest::test_clock_with_negative_minutes - AssertionError: '-1:-40' != '22:20'
====
```
#### F.F...  
#### FAILED clock_test.py::ClockTest::test_clock_with_negative_minutes - AssertionError: '-1:-40' != '22:20'  
#### ####  
####   
#### See the testing errors above.  
#### The tests are correct, don't try and change them.  
#### Fix the code in clock.py to resolve the errors.  

The repr must use the normalized minutes. Now it handles negative values correctly.

clock.py
<<<<<<< SEARCH
    def __repr__(self):
        return f"{self.hour}:{self.minute}"
=======
    def __repr__(self):
        return f"{self.minutes // 60:02d}:{self.minutes % 60:02d}"
>>>>>>> REPLACE

> Applied edit to clock.py  
```
.F....
FAILED clock_test.py::ClockTest::test_add_across_midnight - AttributeError: 'Clock' object has no attribute '__add__'
====
```
"""
open(os.path.join(D, ".aider.chat.history.md"), "w").write(HISTORY)
results = {
    "testdir": "/benchmarks/tmp.benchmarks/2025-03-02-09-00-00--sample-sonnet-diff/python/exercises/practice/clock",
    "testcase": "clock", "model": "anthropic/claude-3-7-sonnet-20250219", "edit_format": "diff",
    "tests_outcomes": [False, False], "cost": 0.0388, "duration": 36.2, "test_timeouts": 0, "commit_hash": "6451d59",
    "num_error_outputs": 0, "num_user_asks": 0, "num_exhausted_context_windows": 0, "num_malformed_responses": 0,
    "syntax_errors": 0, "indentation_errors": 0, "lazy_comments": 0, "reasoning_effort": None,
    "prompt_tokens": 8120, "completion_tokens": 911, "thinking_tokens": None,
    "chat_hashes": [["a1b2c3d4e5", "f6a7b8c9d0"], ["0a9b8c7d6e", "5f4e3d2c1b"]],
}
json.dump(results, open(os.path.join(D, ".aider.results.json"), "w"), indent=4)
