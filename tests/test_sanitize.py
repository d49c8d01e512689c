"""Student markdown in the HTML nbgrader makes: formatting kept, anything that runs removed."""
import re

from graders.pipeline.sanitize import clean_markdown

LIVE = re.compile(r"<script|onerror|javascript:", re.I)


def test_markdown_keeps_its_formatting():
    html = clean_markdown("# Title\n\n**bold**, `a<b` and [docs](https://pytorch.org)")
    assert "<h1" in html and "<strong>bold</strong>" in html and "<code>a&lt;b</code>" in html
    assert 'href="https://pytorch.org"' in html


def test_markdown_loses_what_runs():
    source = "<script>alert(3)</script><img src=x onerror=alert(4)>\n\n[x](javascript:alert(5))"
    assert LIVE.search(source)  # control: the attack is really there before cleaning
    assert not LIVE.search(clean_markdown(source).replace("&lt;script", ""))
