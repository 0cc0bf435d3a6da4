"""Reports: rendering report.json to Markdown and HTML, figures and the helpers they share."""
