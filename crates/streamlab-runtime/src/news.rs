//! News a measurement prints while it runs (a trace taken again, a fallback): sent to
//! the printer the program installs ([`print_with`]), which wraps it as it wraps every
//! line; straight to stderr where none is installed.
use std::sync::OnceLock;

static PRINTER: OnceLock<fn(&str)> = OnceLock::new();

/// Send every later piece of news to `printer`. The first call wins; a later one is
/// ignored.
pub fn print_with(printer: fn(&str)) {
    let _ = PRINTER.set(printer);
}

/// Print `text` as news.
pub fn say(text: &str) {
    match PRINTER.get() {
        Some(print) => print(text),
        None => eprintln!("{text}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    static HEARD: Mutex<Vec<String>> = Mutex::new(Vec::new());

    #[test]
    fn news_goes_to_the_printer_installed_first() {
        print_with(|text| HEARD.lock().unwrap().push(text.to_owned()));
        print_with(|_| panic!("a second printer is ignored"));
        say("a trace taken again");
        assert_eq!(*HEARD.lock().unwrap(), ["a trace taken again"]);
    }
}
