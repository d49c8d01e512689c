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


FAKE_BOX = ('<div class="output_subarea output_stream output_stdout jp-OutputArea-output" id="verdict">'
            "all parts passed</div>")


def test_markdown_cannot_borrow_the_page_classes():
    """A student's div with the output area's classes would read as the grader's verdict box."""
    assert 'class="output_subarea' in FAKE_BOX  # control: the attack is there before cleaning
    html = clean_markdown(FAKE_BOX + '\n\n<span id="x" class="label label-success">graded</span>')
    assert "all parts passed" in html and "graded" in html  # the text stays, as plain text
    assert "class=" not in html and "id=" not in html, html


def test_data_urls_only_as_image_sources():
    png = "data:image/png;base64,iVBORw0KGgo="
    html = clean_markdown(f"![plot]({png})")
    assert f'src="{png}"' in html  # an embedded plot survives
    attacks = ["[click](data:text/html;base64,PHNjcmlwdD4=)", "![x](data:image/svg+xml;base64,PHN2Zz4=)",
               '<a href=" DATA:text/html,x">u</a>', '<img src="da&#x74;a:text/html,x">']
    for source in attacks:
        assert "data:" in source.lower() or "&#x74;" in source  # control
        cleaned = clean_markdown(source)
        assert "data:" not in cleaned.lower() and "&#x74;" not in cleaned, (source, cleaned)
    assert 'href="https://pytorch.org"' in clean_markdown("[ok](https://pytorch.org)")


def test_the_feedback_exporter_cleans_student_markdown():
    """Through nbconvert's HTMLExporter as nbgrader_config.py sets it up (feedback and formgrader pages)."""
    import nbformat
    from nbconvert import HTMLExporter
    from nbformat.v4 import new_markdown_cell, new_notebook

    from graders.pipeline.sanitize import SanitizeMarkdown
    nb = new_notebook(cells=[new_markdown_cell(FAKE_BOX)])
    exporter = HTMLExporter(preprocessors=[SanitizeMarkdown])
    page, _ = exporter.from_notebook_node(nbformat.from_dict(nb))
    at = page.index("all parts passed")
    assert "output_subarea output_stream" not in page[at - 300:at], page[at - 300:at]


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def test_a_pasted_image_is_rendered_from_the_cells_attachments():
    """Issue 38: a markdown cell with a pasted image (an attachment) stopped the whole page ("missing attachment:
    image.png"). Both ways: the raster image shows as a data URL; an SVG, HTML or a missing attachment does not,
    and nothing stops the page."""
    import nbformat
    from nbconvert import HTMLExporter
    from nbformat.v4 import new_markdown_cell, new_notebook

    from graders.pipeline.sanitize import SanitizeMarkdown
    cell = new_markdown_cell("My plot:\n\n![image.png](attachment:image.png)\n\n![svg](attachment:evil.svg) "
                             "![gone](attachment:gone.png)")
    cell.attachments = {"image.png": {"image/png": PNG}, "evil.svg": {"image/svg+xml": "PHN2Zz4=",
                                                                      "text/html": "PHNjcmlwdD4="}}
    exporter = HTMLExporter(preprocessors=[SanitizeMarkdown])
    page, _ = exporter.from_notebook_node(nbformat.from_dict(new_notebook(cells=[cell])))
    assert f'src="data:image/png;base64,{PNG}"' in page and "My plot:" in page
    assert "PHN2Zz4=" not in page and "PHNjcmlwdD4=" not in page and "attachment:" not in page
    assert 'alt="gone"' in page and 'alt="svg"' in page  # the alt text stays where no image may show
